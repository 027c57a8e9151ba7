/**
 * SIMULATORS: whether the simulated carrier and WhatsApp provider may stand in (docs/configuration.md#simulators):
 * disabled (production), enabled (development: their calls and messages free), billed (the tests: charged as a real
 * provider's are, so that billing is exercised through them). A module of its own, importing nothing, so that the rules
 * that read it (lib/carrier-connections/, lib/whatsapp/) need not import the whole configuration.
 */
export const SIMULATOR_SETTINGS = ['disabled', 'enabled', 'billed'] as const;
export type SimulatorsSetting = (typeof SIMULATOR_SETTINGS)[number];

/** What a simulator's calls and its senders record as their provider: the mark of a simulated call or message. */
export const SIMULATED_PROVIDER = 'simulated';

/**
 * Whether a call or message of this provider was simulated (docs/configuration.md#simulators): nobody was called or
 * messaged, its outcome and words were invented. A twin's provider (`twilio-twin`, ...) is a carrier's protocol
 * answered by a test double and is not marked: only the product's own stand-ins are.
 */
export const isSimulatedProvider = (provider: string): boolean => provider === SIMULATED_PROVIDER;
