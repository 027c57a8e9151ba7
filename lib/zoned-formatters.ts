/**
 * One cache of `Intl.DateTimeFormat` for every reader of local clocks (lib/conversation/zoned-time.ts,
 * lib/dial-ladder/calling-window.ts): building one costs far more than formatting with it, and the dial ladder's
 * window search formats thousands of instants per lead. The locale is fixed (en-US: ASCII digits, English weekday
 * names): callers read the parts by type, never the formatted string.
 */
const formatters = new WeakMap<Intl.DateTimeFormatOptions, Map<string, Intl.DateTimeFormat>>();

/**
 * The formatter of `options` in a time zone, made once. `options` is the cache's key by identity: pass a
 * module-level constant, not a literal made at each call.
 */
export function formatterFor(timeZone: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  let byZone = formatters.get(options);
  if (!byZone) {
    byZone = new Map();
    formatters.set(options, byZone);
  }
  let formatter = byZone.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', { ...options, timeZone });
    byZone.set(timeZone, formatter);
  }
  return formatter;
}
