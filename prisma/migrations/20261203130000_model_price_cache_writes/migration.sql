-- Cache-write prices (5-minute and 1-hour); NULL on a price stored before them (its cache writes were charged at the input price).
ALTER TABLE "model_price" ADD COLUMN "cache_write_per_mtok" DECIMAL(20,10),
ADD COLUMN "cache_write_1h_per_mtok" DECIMAL(20,10);
