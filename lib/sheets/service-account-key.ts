import { z } from 'zod';

/** Google's OAuth token endpoint, the token_uri of every key Google issues. */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
/** The Sheets API's root; a twin's is given per connection. */
export const GOOGLE_SHEETS_ROOT_URL = 'https://sheets.googleapis.com/';
/** What the provider asks for: the spreadsheets scope (no Drive scope: it never lists, creates or deletes files). */
export const SHEETS_SCOPE = 'https://www.googleapis.com/auth/spreadsheets';

/**
 * A service account's JSON key as the Google Cloud console downloads it (IAM > Service accounts > Keys > JSON): the
 * members the provider uses are checked; the others are kept as given. Messages never repeat a value: it is a secret.
 */
export const serviceAccountKeySchema = z
  .object({
    type: z.literal('service_account', { message: 'must be "service_account" (a service account key)' }),
    project_id: z.string().min(1),
    private_key_id: z.string().min(1),
    private_key: z.string().includes('PRIVATE KEY', { message: 'must be a PEM private key' }),
    client_email: z.string().email(),
    token_uri: z.string().url().default(GOOGLE_TOKEN_URL),
  })
  .passthrough();
export type ServiceAccountKey = z.infer<typeof serviceAccountKeySchema>;

/** Parses a key's JSON text; a fault names the member, never its value. */
export function parseServiceAccountKey(text: string): ServiceAccountKey {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('the service account key is not JSON');
  }
  const parsed = serviceAccountKeySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`the service account key's ${issue.path.join('.') || 'content'} ${issue.message}`);
  }
  return parsed.data;
}
