-- CreateEnum
CREATE TYPE "DirectorySectionStatus" AS ENUM ('OK', 'STALE', 'FAILED');

-- AlterTable
ALTER TABLE "ledger_event" ADD COLUMN     "contract_form" TEXT,
ADD COLUMN     "contract_sha256" CHAR(64);

-- CreateTable
CREATE TABLE "directory_section" (
    "type" TEXT NOT NULL,
    "file" TEXT NOT NULL,
    "version_tag" CHAR(64),
    "built_at" TIMESTAMPTZ(3),
    "status" "DirectorySectionStatus" NOT NULL,
    "seen_tag" CHAR(64) NOT NULL,
    "seen_at" TIMESTAMPTZ(3) NOT NULL,
    "errors" JSONB NOT NULL DEFAULT '[]',
    "refusals" JSONB NOT NULL DEFAULT '[]',
    "unknown_headers" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "headers" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "row_count" INTEGER NOT NULL DEFAULT 0,
    "builds" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "directory_section_pkey" PRIMARY KEY ("type")
);

-- CreateTable
CREATE TABLE "directory_row" (
    "type" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "ordinal" INTEGER NOT NULL,
    "kind" TEXT,
    "row_id" TEXT,
    "description" TEXT NOT NULL DEFAULT '',
    "text" JSONB NOT NULL DEFAULT '{}',
    "ways" JSONB NOT NULL DEFAULT '{}',
    "args_schema" JSONB,
    "upstream_sha256" CHAR(64),
    "secret_names" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "unbound_secrets" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "runnable" BOOLEAN NOT NULL DEFAULT false,
    "reasons" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "version_tag" CHAR(64) NOT NULL,

    CONSTRAINT "directory_row_pkey" PRIMARY KEY ("type","name")
);

-- CreateTable
CREATE TABLE "contract_version" (
    "sha256" CHAR(64) NOT NULL,
    "shape" TEXT NOT NULL,
    "contract" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "contract_version_pkey" PRIMARY KEY ("sha256")
);

-- CreateIndex
CREATE INDEX "directory_row_name_idx" ON "directory_row"("name");

-- CreateIndex
CREATE INDEX "directory_row_type_ordinal_idx" ON "directory_row"("type", "ordinal");

-- AddForeignKey
ALTER TABLE "directory_row" ADD CONSTRAINT "directory_row_type_fkey" FOREIGN KEY ("type") REFERENCES "directory_section"("type") ON DELETE CASCADE ON UPDATE CASCADE;

-- Hand-written: what Prisma cannot express.
-- A contract version, once stored, is what some event ran: never changed or removed.
CREATE TRIGGER "contract_version_append_only" BEFORE UPDATE OR DELETE ON "contract_version"
  FOR EACH ROW EXECUTE FUNCTION "ledger_refuse_change"();
CREATE TRIGGER "contract_version_no_truncate" BEFORE TRUNCATE ON "contract_version"
  FOR EACH STATEMENT EXECUTE FUNCTION "ledger_refuse_change"();
-- An event names a contract by form and hash together, or not at all.
ALTER TABLE "ledger_event" ADD CONSTRAINT "ledger_event_contract_check"
  CHECK ((contract_form IS NULL) = (contract_sha256 IS NULL) AND (contract_sha256 IS NULL OR contract_sha256 ~ '^[0-9a-f]{64}$'));
CREATE INDEX "ledger_event_contract_sha256_idx" ON "ledger_event"("contract_sha256") WHERE contract_sha256 IS NOT NULL;
