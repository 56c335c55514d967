-- The hash chain's cost (issue 16): chain version 2. A v2 batch's event digests leave out the position,
-- so the append statement computes them before it takes the commit lock; under the lock it only joins
-- them to the positions it assigned and hashes the batch's link (docs/ARCHITECTURE.md, Tamper evidence).
-- chain_version says which encoding a batch's link and digests use. Every batch stored before this
-- migration, and any written by a server that does not name the column, is version 1: the default.
-- The column means something only where chain_seq is set (a chained batch).

-- AlterTable
ALTER TABLE "ledger_batch" ADD COLUMN     "chain_version" SMALLINT DEFAULT 1;
