-- The merchant dashboard's money pages (issue 14).
--
-- The home page's volume of the last 30 days (store.DailyVolume) reads a merchant's
-- transactions of one environment by creation date and sums requested_amount by day, currency, direction
-- and status: with those columns included the read is an index-only scan of the range, never
-- a visit of every row of the month (transactions_merchant_created_idx finds the same range but
-- must then read each row from the table).
CREATE INDEX transactions_volume_idx ON transactions (merchant_id, environment, created_at)
    INCLUDE (flow_direction, transaction_type, status, currency, requested_amount);

-- The ledger of one wallet, newest first (store.ListWalletLedger).
CREATE INDEX ledger_entries_wallet_idx ON ledger_entries (wallet_id, created_at DESC, id DESC);

-- The webhook deliveries of a transaction (store.TransactionDeliveries): its events, then each
-- event's deliveries (webhook_deliveries_event_idx).
CREATE INDEX events_transaction_idx ON events (transaction_id, created_at) WHERE transaction_id IS NOT NULL;
