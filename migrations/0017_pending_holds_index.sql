-- The payouts in flight, for the sika_wallet_holds gauge read at every metrics scrape: a small
-- partial index, so that counting them never scans the transaction history.
CREATE INDEX transactions_pending_outbound_idx ON transactions (currency, environment)
    WHERE status = 'PENDING' AND flow_direction = 'OUTBOUND';
