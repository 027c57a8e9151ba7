import { z } from 'zod';
import { atMostCodePoints } from '../../lib/code-point-length';
import { ErrorCode } from '../../lib/error-codes';
import { leadFieldsSchema } from '../../lib/campaigns/lead-fields';
import { e164PhoneSchema } from '../../lib/phone';
import type { Principal } from '../door/principal';
import { Refusal } from '../../lib/refusal';
import { findOwnedCampaign } from '../campaigns/campaigns';
import type { AppServices } from '../app-services';

export { MAX_CONTACTS } from '../../lib/campaigns/contact-limits';

/** One contact of POST /campaigns/{id}/contacts; customers imported from a CRM connection are checked by it too. */
export const contactInputSchema = z.object({
  phone: e164PhoneSchema,
  name: z.string().check(atMostCodePoints(200)).optional(),
  // Becomes the lead's fields when the campaign starts: the same caps.
  metadata: leadFieldsSchema.default({}),
});

export type ContactInput = z.output<typeof contactInputSchema>;

/**
 * Adds contacts to a DRAFT campaign's calling list in one statement: the request's duplicates are
 * dropped (first occurrence wins), every phone becomes a workspace contact unless it is one already
 * (an existing contact keeps its name and metadata), and phones already on the list are skipped. The
 * unique (workspace, phone) and (campaign, contact) keys make concurrent imports safe; the campaign
 * row is share-locked so a start waits for an import in progress and enrolls all of it.
 */
export async function addContacts(
  services: AppServices,
  principal: Principal,
  campaignId: string,
  contacts: readonly ContactInput[],
) {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  const client = await services.sql.connect();
  try {
    await client.query('BEGIN');
    const {
      rows: [locked],
    } = await client.query<{ status: string }>('SELECT status::text FROM "Campaign" WHERE id = $1::uuid FOR SHARE', [
      campaign.id,
    ]);
    if (locked!.status !== 'DRAFT') throw new Refusal(ErrorCode.campaign_not_draft, { status: locked!.status });
    // Imports into one campaign take turns (they would lock list rows in request order, and deadlock);
    // contacts are upserted in phone order, so imports into different campaigns cannot deadlock either.
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`contacts:${campaign.id}`]);
    const {
      rows: [counts],
    } = await client.query<{ added: number; total: number }>({
      name: 'add_contacts',
      text: `
        WITH input AS (
          SELECT DISTINCT ON (phone) phone, name, metadata, ord
            FROM unnest($3::text[], $4::text[], $5::jsonb[]) WITH ORDINALITY AS t(phone, name, metadata, ord)
           ORDER BY phone, ord
        ), contact AS (
          INSERT INTO "Contact" (id, "workspaceId", phone, name, metadata)
          SELECT gen_random_uuid(), $1::uuid, phone, name, metadata FROM input ORDER BY phone
          ON CONFLICT ("workspaceId", phone) DO UPDATE SET phone = EXCLUDED.phone
          RETURNING id, phone
        ), listed AS (
          INSERT INTO "CampaignContact" ("campaignId", "contactId")
          SELECT $2::uuid, contact.id FROM contact JOIN input USING (phone) ORDER BY input.ord
          ON CONFLICT DO NOTHING
          RETURNING 1
        )
        SELECT (SELECT count(*) FROM listed)::int AS added, (SELECT count(*) FROM input)::int AS total`,
      values: [
        principal.workspaceId,
        campaign.id,
        contacts.map((contact) => contact.phone),
        contacts.map((contact) => contact.name ?? null),
        contacts.map((contact) => JSON.stringify(contact.metadata)),
      ],
    });
    await client.query('COMMIT');
    return counts!;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

const PREVIEW_ROWS = 5;
const MAX_COLUMNS = 100;

/** The calling list: phone, name and every metadata key seen on it; its size; its first rows. */
export async function previewContacts(services: AppServices, principal: Principal, campaignId: string) {
  const campaign = await findOwnedCampaign(services, principal, campaignId);
  const [
    { rows: keys },
    {
      rows: [size],
    },
    { rows: preview },
  ] = await Promise.all([
    services.sql.query<{ key: string }>(
      `SELECT DISTINCT jsonb_object_keys(c.metadata) AS key FROM "CampaignContact" cc JOIN "Contact" c ON c.id = cc."contactId"
        WHERE cc."campaignId" = $1::uuid ORDER BY 1 LIMIT ${MAX_COLUMNS}`,
      [campaign.id],
    ),
    services.sql.query<{ count: number }>(
      'SELECT count(*)::int AS count FROM "CampaignContact" WHERE "campaignId" = $1::uuid',
      [campaign.id],
    ),
    services.sql.query<{ phone: string; name: string | null; metadata: Record<string, unknown> }>(
      `SELECT c.phone, c.name, c.metadata FROM "CampaignContact" cc JOIN "Contact" c ON c.id = cc."contactId"
        WHERE cc."campaignId" = $1::uuid ORDER BY cc.position LIMIT ${PREVIEW_ROWS}`,
      [campaign.id],
    ),
  ]);
  const metadataColumns = keys.map((row) => row.key).filter((key) => key !== 'phone' && key !== 'name');
  return {
    columns: ['phone', 'name', ...metadataColumns],
    rowCount: size!.count,
    preview: preview.map((row) => ({ ...row.metadata, phone: row.phone, name: row.name })),
  };
}
