-- AlterTable
ALTER TABLE "Call" ADD COLUMN     "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- CreateTable
CREATE TABLE "LiveSheet" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "campaignId" UUID NOT NULL,
    "provider" TEXT NOT NULL DEFAULT 'local',
    "spreadsheetId" TEXT NOT NULL,
    "columns" JSONB NOT NULL,
    "intervalSeconds" INTEGER NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "cursor" JSONB,
    "syncNumber" INTEGER NOT NULL DEFAULT 0,
    "syncUntil" TIMESTAMP(3),
    "syncStartedAt" TIMESTAMP(3),
    "syncRowsWritten" INTEGER NOT NULL DEFAULT 0,
    "lastSyncAt" TIMESTAMP(3),
    "lastSyncRowsWritten" INTEGER NOT NULL DEFAULT 0,
    "rowsWrittenTotal" BIGINT NOT NULL DEFAULT 0,
    "rowCount" INTEGER NOT NULL DEFAULT 0,
    "publishedAt" TIMESTAMP(3),
    "error" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "LiveSheet_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "LiveSheetRow" (
    "sheetId" UUID NOT NULL,
    "leadId" UUID NOT NULL,
    "row" INTEGER NOT NULL,

    CONSTRAINT "LiveSheetRow_pkey" PRIMARY KEY ("sheetId","leadId")
);

-- CreateIndex
CREATE UNIQUE INDEX "LiveSheet_campaignId_key" ON "LiveSheet"("campaignId");

-- CreateIndex
CREATE UNIQUE INDEX "LiveSheetRow_sheetId_row_key" ON "LiveSheetRow"("sheetId", "row");

-- CreateIndex
CREATE INDEX "Call_campaignId_updatedAt_idx" ON "Call"("campaignId", "updatedAt");

-- CreateIndex
CREATE INDEX "Lead_campaignId_id_idx" ON "Lead"("campaignId", "id");

-- CreateIndex
CREATE INDEX "Lead_campaignId_updatedAt_idx" ON "Lead"("campaignId", "updatedAt");

-- AddForeignKey
ALTER TABLE "LiveSheetRow" ADD CONSTRAINT "LiveSheetRow_sheetId_fkey" FOREIGN KEY ("sheetId") REFERENCES "LiveSheet"("id") ON DELETE CASCADE ON UPDATE CASCADE;


-- Live sheets find the leads whose row changed since their cursor through "updatedAt" of Lead and Call.
-- These triggers stamp it on the database's clock on every insert and update, whoever writes the row
-- (Prisma, plain SQL, a bulk COPY) and whatever the writer's clock says (README "Live sheets").
CREATE FUNCTION "set_updated_at_now"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW."updatedAt" := clock_timestamp() AT TIME ZONE 'UTC';
  RETURN NEW;
END;
$$;

CREATE TRIGGER "Call_set_updatedAt" BEFORE INSERT OR UPDATE ON "Call"
  FOR EACH ROW EXECUTE FUNCTION "set_updated_at_now"();

CREATE TRIGGER "Lead_set_updatedAt" BEFORE INSERT OR UPDATE ON "Lead"
  FOR EACH ROW EXECUTE FUNCTION "set_updated_at_now"();
