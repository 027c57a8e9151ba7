/**
 * Choices drawn from a seed by FNV-1a over seed and purpose: the same seed makes the same choice, so a twin's person
 * gives the same answer to the same question on every run (simulators/twilio-twin/persona.ts), and the simulated
 * carrier's conversation the same transcript for the same call (simulators/simulated-carrier/conversation.ts). The
 * simulators' own: they share none of the product's code.
 */
export interface SeededPicker {
  <T>(purpose: string, choices: readonly T[]): T;
  index(purpose: string, size: number): number;
}

export function seededPicker(seed: string): SeededPicker {
  const index = (purpose: string, size: number) => (size <= 0 ? 0 : fnv1a(`${seed}\u0000${purpose}`) % size);
  const pick = <T>(purpose: string, choices: readonly T[]): T => choices[index(purpose, choices.length)]!;
  return Object.assign(pick, { index });
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
