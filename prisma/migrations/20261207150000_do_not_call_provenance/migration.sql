-- The Do-Not-Call list records how each number came to be listed (docs/features/leads.md#the-do-not-call-list): its
-- source, the call or the WhatsApp message it came from, and when (createdAt, as before). The numbers listed before
-- are kept, with source 'unknown': whether the API or a spoken opt-out listed them was not recorded. A new row always
-- names its source (no default).
ALTER TABLE "DoNotCall" ADD COLUMN "source" TEXT NOT NULL DEFAULT 'unknown',
ADD COLUMN "callId" UUID,
ADD COLUMN "messageId" UUID;

ALTER TABLE "DoNotCall" ALTER COLUMN "source" DROP DEFAULT;
