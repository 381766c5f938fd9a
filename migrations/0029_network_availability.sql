-- Network availability (GET /networks/): what the gateways answered over the last minutes, read
-- from the attempts.

-- When the gateway first answered an attempt (accepted, refused, did not take it, decided):
-- the attempt's start to this is the gateway's latency. NULL until then, and for attempts
-- recorded before this migration.
ALTER TABLE transaction_attempts ADD COLUMN answered_at timestamptz;

-- The last minutes of an environment's attempts, read every few seconds at most (a cached
-- query): never a scan of the attempts' history.
CREATE INDEX transaction_attempts_recent_idx ON transaction_attempts (environment, created_at);
