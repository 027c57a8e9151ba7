-- The simulated WhatsApp provider (Meta's twin, simulators/whatsapp/) keeps its record in a schema of its own,
-- meta_twin, which it makes at start (simulators/whatsapp/store.ts): its tables leave the product's schema. What a
-- provider of before still owed (webhooks of messages and templates in flight) is not carried over: a twin's state.

-- DropTable
DROP TABLE "SimulatedWhatsAppMessage";

-- DropTable
DROP TABLE "SimulatedWhatsAppTemplate";
