/**
 * Where a real (not `-twin`) provider's connection may send its requests (docs/providers.md#base-urls): https on the
 * provider's own hosts only, regional edges included. A connection's base URL, which the operator types, would
 * otherwise carry its credentials anywhere (a plain-http address, another host). A `-twin` provider takes any http(s)
 * URL: it is a local process of tests and development.
 */

/** Twilio's REST API: api.twilio.com, or a processing region through an edge, api.<edge>.<region>.twilio.com. */
const TWILIO_HOST = /^api(?:\.[a-z]+(?:-[a-z]+)*\.[a-z]{2}[0-9])?\.twilio\.com$/;
/** A shop's permanent domain. */
const SHOPIFY_HOST = /^[a-z0-9][a-z0-9-]*\.myshopify\.com$/;

/** Each real provider's hosts, as the rule that says whether a host is one of them, and how the refusal names them. */
export const REAL_PROVIDER_HOSTS = {
  twilio: {
    allows: (host: string) => TWILIO_HOST.test(host),
    named: 'api.twilio.com or api.<edge>.<region>.twilio.com',
  },
  telnyx: { allows: (host: string) => host === 'api.telnyx.com', named: 'api.telnyx.com' },
  meta: { allows: (host: string) => host === 'graph.facebook.com', named: 'graph.facebook.com' },
  google: {
    allows: (host: string) => host === 'sheets.googleapis.com' || host === 'oauth2.googleapis.com',
    named: 'sheets.googleapis.com or oauth2.googleapis.com',
  },
  shopify: { allows: (host: string) => SHOPIFY_HOST.test(host), named: '<shop>.myshopify.com' },
} as const;

export type RealProvider = keyof typeof REAL_PROVIDER_HOSTS;

/** The longest base URL looked at (any longer is refused unread). */
const BASE_URL_MAX = 2_000;

/**
 * Why `baseUrl` cannot be a real provider's base URL (a message naming the flag's rule, never the URL), or null when it
 * can: https, no credentials in it, on one of the provider's hosts, on the default port.
 */
export function realBaseUrlRefusal(provider: RealProvider, baseUrl: string): string | null {
  const { allows, named } = REAL_PROVIDER_HOSTS[provider];
  const refusal = `a ${provider} connection's base URL must be https://${named}`;
  if (baseUrl.length > BASE_URL_MAX || !URL.canParse(baseUrl)) return refusal;
  const url = new URL(baseUrl);
  if (url.protocol !== 'https:' || url.username || url.password || url.port) return refusal;
  return allows(url.hostname) ? null : refusal;
}
