-- CreateTable
CREATE TABLE "token_spend_hold" (
    "hold_id" TEXT NOT NULL,
    "counter" CHAR(64) NOT NULL,
    "token_id" CHAR(32) NOT NULL,
    "unit" TEXT NOT NULL,
    "amount" DECIMAL(30,10) NOT NULL,
    "action_id" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "token_spend_hold_pkey" PRIMARY KEY ("hold_id","counter")
);

-- CreateIndex
CREATE INDEX "token_spend_hold_expires_at_idx" ON "token_spend_hold"("expires_at");
