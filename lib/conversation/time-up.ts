/**
 * What the agent says when the minutes a test's credit hold covers run out (by language; others: English): a test
 * session's socket (api/test-sessions/session-socket.ts) and a test call's relay socket (api/carriers/relay-socket.ts)
 * say it, then end the conversation, so a test never talks longer than it paid for (issue 40).
 */
const TIME_UP_LINES: Record<string, string> = {
  en: "I'm sorry, the time for this test is up. Goodbye.",
  es: 'Lo siento, el tiempo de esta prueba se ha agotado. Adiós.',
};

export const timeUpLine = (language: string) =>
  TIME_UP_LINES[language.split('-')[0]!.toLowerCase()] ?? TIME_UP_LINES.en!;
