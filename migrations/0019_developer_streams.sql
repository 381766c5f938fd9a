-- The developer CLI's live streams (issue 15): `sika listen` reads a merchant's events and
-- `sika logs tail` its API requests as they commit, from any API replica.
--
-- A stream reads rows in commit-safe order: by the id of the Postgres transaction that wrote them
-- (stream_xid), and only below the oldest transaction still running
-- (pg_snapshot_xmin(pg_current_snapshot())). A row can then never appear behind a position a
-- stream has passed: every transaction below the horizon has ended, and one that commits later
-- has an id at or above it. Ordering by the time-ordered primary key alone would skip a row whose
-- transaction began first but committed last. Existing events get 0 (they are all history).
ALTER TABLE events ADD COLUMN stream_xid xid8 NOT NULL DEFAULT '0';
ALTER TABLE events ALTER COLUMN stream_xid SET DEFAULT pg_current_xact_id();
CREATE INDEX events_stream_idx ON events (merchant_id, environment, stream_xid, id);

-- The API requests of a merchant, recorded by the API's middleware in batches. Never a body,
-- a key, a query string or a phone number: the route's path, its outcome and the ids a
-- developer correlates with (Idempotency-Key, X-Request-Id). Purged after a retention by the
-- hourly housekeeping workflow.
CREATE TABLE api_request_logs (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    stream_xid      xid8 NOT NULL DEFAULT pg_current_xact_id(),
    merchant_id     uuid NOT NULL,
    environment     text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    api_key_id      uuid,
    method          text NOT NULL,
    route           text NOT NULL,
    path            text NOT NULL,
    status          int NOT NULL,
    latency_ms      numeric(12, 3) NOT NULL, -- milliseconds to the microsecond (no float in the schema)
    idempotency_key text,
    request_id      text NOT NULL,
    created_at      timestamptz NOT NULL
);
CREATE INDEX api_request_logs_stream_idx ON api_request_logs (merchant_id, environment, stream_xid, id);
CREATE INDEX api_request_logs_created_idx ON api_request_logs (created_at);
