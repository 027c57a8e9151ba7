-- Written by hand: schema.prisma needs no change for it. `prisma migrate deploy` applies it once.
-- A run keeps "recovery" only while it waits for an operator (status needs_recovery). Until this
-- release, clearing it wrote Prisma's { set: null } into the Json column, which stores that object:
-- every run that had moved on answered "awaiting": {"set": null}. Such rows get SQL NULL.
UPDATE "JourneyRun" SET "recovery" = NULL WHERE "status" <> 'needs_recovery' AND "recovery" IS NOT NULL;
