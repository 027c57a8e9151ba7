/**
 * SIMULATORS: whether the simulated carrier and WhatsApp provider may stand in (docs/configuration.md#simulators):
 * disabled (production), enabled (development: their calls and messages free), billed (the tests: charged as a real
 * provider's are, so that billing is exercised through them). A module of its own, importing nothing, so that the rules
 * that read it (lib/carrier-connections/, lib/whatsapp/) need not import the whole configuration.
 */
export const SIMULATOR_SETTINGS = ['disabled', 'enabled', 'billed'] as const;
export type SimulatorsSetting = (typeof SIMULATOR_SETTINGS)[number];
