import { defineRoute, type HttpMethod, type RouteDefinition } from '../http/route';

/**
 * The spec's "actions refused to keys": dashboard-only actions. An API key gets 403
 * api_key_not_allowed whatever its scopes. Paths are this service's (the spec names only the groups).
 */
const REFUSED: Record<string, Array<[HttpMethod, string]>> = {
  'Signing in to third-party services': [
    ['post', '/calendar/connect'],
    ['post', '/sheets/connect'],
    ['post', '/crm/connections'],
    ['post', '/integrations/{id}/connect'],
  ],
  'WhatsApp sender signup, QR connection and number reservation': [
    ['post', '/whatsapp/senders/signup'],
    ['post', '/whatsapp/senders/{id}/qr'],
    ['post', '/whatsapp/numbers/reserve'],
  ],
  'Buying phone numbers and identity verification': [
    ['post', '/phone-numbers/purchase'],
    ['post', '/identity-verification'],
  ],
  'Wallet top-ups and payment details': [
    ['post', '/billing/top-ups'],
    ['put', '/billing/payment-method'],
  ],
  'Removing a number from the Do Not Call list': [['delete', '/do-not-call/{phone}']],
  'Chatbot test chats': [['post', '/chatbots/{id}/test-chat']],
  'Editing the shared home dashboard': [['put', '/dashboard/home']],
  // A live sheet's own spreadsheet is read through GET /campaigns/{id}/sheet/download (intel.view); any
  // other spreadsheet (listed from a signed-in sheets account, or attached to a campaign's live sheet in
  // place of the local one) is the dashboard's.
  'Reading or attaching arbitrary spreadsheets': [
    ['get', '/spreadsheets'],
    ['post', '/spreadsheets/attach'],
    ['post', '/campaigns/{id}/sheet/attach'],
  ],
  'Personal profile, onboarding and notifications': [
    ['get', '/me/profile'],
    ['patch', '/me/profile'],
    ['post', '/me/onboarding'],
    ['get', '/me/notifications'],
  ],
  'E-mail features': [
    ['get', '/email/templates'],
    ['post', '/email/templates'],
    ['post', '/email/send'],
  ],
};

export const refusedToKeysRoutes: RouteDefinition[] = Object.entries(REFUSED).flatMap(([group, endpoints]) =>
  endpoints.map(([method, path]) =>
    defineRoute({
      method,
      path,
      access: { keysRefused: true },
      summary: `${group}: refused to API keys (403 api_key_not_allowed).`,
      tags: ['Refused to API keys'],
      handler: async () => {
        throw new Error('unreachable: the door refuses every API key before this handler');
      },
    }),
  ),
);
