-- The live streams' leases (issue 24): an open GET /events/stream/ or /request-logs/stream/
-- holds one row, renewed while it runs and deleted when it ends, so that every API replica sees
-- how many streams a merchant and a key hold (the caps) without any replica's memory. A replica
-- that dies leaves rows that expire.
CREATE TABLE stream_leases (
    id          uuid PRIMARY KEY,
    merchant_id uuid NOT NULL,
    environment text NOT NULL, -- the stream's; the caps count both environments
    api_key_id  uuid,
    expires_at  timestamptz NOT NULL
);
CREATE INDEX stream_leases_merchant_idx ON stream_leases (merchant_id, expires_at);
