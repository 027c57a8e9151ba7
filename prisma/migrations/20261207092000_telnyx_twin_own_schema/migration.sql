-- The Telnyx twin (simulators/telnyx-twin/) keeps its record in a schema of its own, telnyx_twin, which it makes at
-- start (simulators/telnyx-twin/call-store.ts): its tables leave the product's schema. Calls of a twin of before that
-- were still on, and webhooks it still owed, are not carried over: a twin's state.

-- DropTable (its webhooks first: they reference the calls)
DROP TABLE "TelnyxTwinWebhook";

-- DropTable
DROP TABLE "TelnyxTwinCall";
