-- CreateTable
CREATE TABLE "CalendarConnection" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "provider" TEXT NOT NULL,
    "calendarId" TEXT,
    "subject" TEXT,
    "serviceAccountEmail" TEXT,
    "eventTypeId" INTEGER,
    "durationMinutes" INTEGER NOT NULL DEFAULT 30,
    "hostTimeZone" TEXT NOT NULL DEFAULT 'UTC',
    "secretKeyId" TEXT,
    "secretNonce" TEXT,
    "secretCiphertext" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "CalendarConnection_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "CalendarHold" (
    "workspaceId" UUID NOT NULL,
    "startsAt" TIMESTAMP(3) NOT NULL,
    "callId" UUID NOT NULL,
    "endsAt" TIMESTAMP(3) NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "reservationUid" TEXT,
    "readBackAt" TIMESTAMP(3),

    CONSTRAINT "CalendarHold_pkey" PRIMARY KEY ("workspaceId","startsAt")
);

-- CreateTable
CREATE TABLE "Appointment" (
    "id" UUID NOT NULL,
    "workspaceId" UUID NOT NULL,
    "callId" UUID NOT NULL,
    "leadId" UUID,
    "provider" TEXT NOT NULL,
    "bookingKey" TEXT NOT NULL,
    "providerBookingId" TEXT NOT NULL,
    "startsAt" TIMESTAMP(3) NOT NULL,
    "endsAt" TIMESTAMP(3) NOT NULL,
    "timeZone" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'booked',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "Appointment_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "CalendarConnection_workspaceId_key" ON "CalendarConnection"("workspaceId");

-- CreateIndex
CREATE INDEX "CalendarHold_callId_idx" ON "CalendarHold"("callId");

-- CreateIndex
CREATE UNIQUE INDEX "Appointment_bookingKey_key" ON "Appointment"("bookingKey");

-- CreateIndex
CREATE INDEX "Appointment_workspaceId_startsAt_id_idx" ON "Appointment"("workspaceId", "startsAt", "id");
