-- The Twilio twin (simulators/twilio-twin/) keeps its record in a schema of its own, twilio_twin, which it makes at
-- start (simulators/twilio-twin/call-store.ts): its tables leave the product's schema. Calls of a twin of before that
-- were still on, and callbacks it still owed, are not carried over: a twin's state.

-- DropTable (its callbacks first: they reference the calls)
DROP TABLE "TwilioTwinCallback";

-- DropTable
DROP TABLE "TwilioTwinCall";
