-- Events and webhook delivery: an event row is written in the Postgres transaction of the state
-- change that causes it, together with one outbox row per matching webhook endpoint.

CREATE TABLE webhook_endpoints (
    id                          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    merchant_id                 uuid NOT NULL REFERENCES merchants (id),
    environment                 text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    payment_link_id             uuid,
    url                         text NOT NULL,
    description                 text NOT NULL DEFAULT '',
    is_active                   boolean NOT NULL DEFAULT true,
    signing_secret              text NOT NULL,
    previous_secret             text,
    previous_secret_expires_at  timestamptz,
    disabled_reason             text NOT NULL DEFAULT '',
    created_by_member           uuid REFERENCES members (id),
    deleted_at                  timestamptz,
    created_at                  timestamptz NOT NULL DEFAULT now(),
    updated_at                  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_merchant_idx ON webhook_endpoints (merchant_id, environment, created_at DESC) WHERE deleted_at IS NULL;

-- id orders events (time-ordered UUIDs, for cursor pagination); event_id is what merchants see.
CREATE TABLE events (
    id              uuid PRIMARY KEY,
    event_id        text NOT NULL UNIQUE,
    merchant_id     uuid NOT NULL REFERENCES merchants (id),
    environment     text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    type            text NOT NULL,
    payload         jsonb NOT NULL,
    payment_link_id uuid,
    transaction_id  uuid,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX events_merchant_idx ON events (merchant_id, environment, created_at DESC, id DESC);

CREATE TABLE webhook_deliveries (
    id               uuid PRIMARY KEY,
    event_id         text NOT NULL REFERENCES events (event_id),
    endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id),
    merchant_id      uuid NOT NULL REFERENCES merchants (id),
    environment      text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    attempt          int NOT NULL,
    succeeded        boolean NOT NULL,
    status_code      int,
    latency_ms       int NOT NULL,
    response_excerpt text NOT NULL DEFAULT '',
    error            text NOT NULL DEFAULT '',
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id, created_at);
