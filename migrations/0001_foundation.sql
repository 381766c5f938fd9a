-- Foundation: accounts, keys, tenancy settings, the reference catalogue, pricing and the
-- idempotency store. Money is NUMERIC; every merchant-owned row has merchant_id and environment.

CREATE EXTENSION IF NOT EXISTS pgcrypto;

CREATE TABLE countries (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    iso_code               char(2) NOT NULL UNIQUE CHECK (iso_code ~ '^[A-Z]{2}$'),
    name                   text NOT NULL,
    default_currency       char(3) NOT NULL CHECK (default_currency ~ '^[A-Z]{3}$'),
    calling_code           text NOT NULL CHECK (calling_code ~ '^[0-9]{1,4}$'),
    national_number_lengths int[] NOT NULL CHECK (cardinality(national_number_lengths) > 0),
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE networks (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    country_id       uuid NOT NULL REFERENCES countries (id),
    code             text NOT NULL UNIQUE CHECK (code ~ '^[A-Z0-9]+_[A-Z]{2}$'),
    name             text NOT NULL,
    is_active        boolean NOT NULL DEFAULT true,
    otp_kind         text NOT NULL DEFAULT 'NONE' CHECK (otp_kind IN ('NONE', 'PRE_PAYMENT', 'POST_PUSH')),
    otp_instructions text NOT NULL DEFAULT '',
    redirect         boolean NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX networks_country_idx ON networks (country_id);

CREATE TABLE exchange_rates (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    from_currency char(3) NOT NULL,
    to_currency   char(3) NOT NULL,
    rate          numeric(24, 10) NOT NULL CHECK (rate > 0),
    auto_update   boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (from_currency, to_currency),
    CHECK (from_currency <> to_currency)
);

CREATE TABLE members (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    email         text NOT NULL,
    password_hash text NOT NULL,
    full_name     text NOT NULL DEFAULT '',
    is_staff      boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX members_email_key ON members (lower(email));

CREATE TABLE merchants (
    id                     uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name                   text NOT NULL,
    country                char(2) NOT NULL REFERENCES countries (iso_code),
    kyc_status             text NOT NULL DEFAULT 'PENDING' CHECK (kyc_status IN ('PENDING', 'VERIFIED', 'REJECTED')),
    is_active              boolean NOT NULL DEFAULT false,
    is_suspended           boolean NOT NULL DEFAULT false,
    rate_limit_per_minute  int CHECK (rate_limit_per_minute > 0),
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE memberships (
    member_id   uuid NOT NULL REFERENCES members (id) ON DELETE CASCADE,
    merchant_id uuid NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
    role        text NOT NULL DEFAULT 'OWNER' CHECK (role IN ('OWNER', 'ADMIN')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (member_id, merchant_id)
);
CREATE INDEX memberships_merchant_idx ON memberships (merchant_id);

CREATE TABLE api_keys (
    id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    merchant_id       uuid NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
    environment       text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    scope             text NOT NULL CHECK (scope IN ('PAYIN', 'PAYOUT', 'BOTH')),
    name              text NOT NULL DEFAULT '',
    prefix            text NOT NULL,
    key_hash          bytea NOT NULL UNIQUE CHECK (length(key_hash) = 32),
    last_used_at      timestamptz,
    revoked_at        timestamptz,
    created_by_member uuid REFERENCES members (id) ON DELETE SET NULL,
    created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX api_keys_merchant_idx ON api_keys (merchant_id, environment, created_at DESC);

CREATE TABLE ip_whitelist (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    merchant_id uuid NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
    environment text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    ip_address  cidr NOT NULL,
    description text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (merchant_id, environment, ip_address)
);

CREATE TABLE merchant_settings (
    merchant_id           uuid NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
    environment           text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    fee_charge_mode       text NOT NULL DEFAULT 'DEDUCTED' CHECK (fee_charge_mode IN ('ADD_ON', 'DEDUCTED')),
    allow_client_override boolean NOT NULL DEFAULT false,
    updated_at            timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, environment)
);

-- Pricing: a row with merchant_id NULL is the default price of a network and direction; a
-- merchant's own row (with its environment) replaces it. fee_* is what the merchant is charged;
-- gateway_* is the operator's cost inside it; the difference is the platform's.
CREATE TABLE pricing (
    id                 uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    merchant_id        uuid REFERENCES merchants (id) ON DELETE CASCADE,
    environment        text CHECK (environment IN ('TEST', 'LIVE')),
    network_id         uuid NOT NULL REFERENCES networks (id),
    direction          text NOT NULL CHECK (direction IN ('INBOUND', 'OUTBOUND')),
    fee_percent        numeric(7, 4) NOT NULL DEFAULT 0 CHECK (fee_percent >= 0 AND fee_percent < 100),
    fee_fixed          numeric(20, 2) NOT NULL DEFAULT 0 CHECK (fee_fixed >= 0),
    min_fee            numeric(20, 2) CHECK (min_fee >= 0),
    max_fee            numeric(20, 2) CHECK (max_fee >= 0),
    gateway_fee_percent numeric(7, 4) NOT NULL DEFAULT 0 CHECK (gateway_fee_percent >= 0),
    gateway_fee_fixed  numeric(20, 2) NOT NULL DEFAULT 0 CHECK (gateway_fee_fixed >= 0),
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now(),
    CHECK ((merchant_id IS NULL) = (environment IS NULL)),
    CHECK (min_fee IS NULL OR max_fee IS NULL OR min_fee <= max_fee)
);
CREATE UNIQUE INDEX pricing_default_key ON pricing (network_id, direction) WHERE merchant_id IS NULL;
CREATE UNIQUE INDEX pricing_merchant_key ON pricing (merchant_id, environment, network_id, direction) WHERE merchant_id IS NOT NULL;

-- Idempotency keys (contract §6): claimed atomically by the first request, then holding the
-- stored response. locked_until is the lease of an in-flight claim: a claim whose process died
-- is taken over once the lease has passed.
CREATE TABLE idempotency_keys (
    merchant_id      uuid NOT NULL REFERENCES merchants (id) ON DELETE CASCADE,
    environment      text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    key              text NOT NULL CHECK (length(key) BETWEEN 1 AND 255),
    request_hash     bytea NOT NULL,
    method           text NOT NULL,
    path             text NOT NULL,
    response_status  int,
    response_type    text,
    response_body    bytea,
    locked_until     timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    completed_at     timestamptz,
    expires_at       timestamptz NOT NULL,
    PRIMARY KEY (merchant_id, environment, key),
    CHECK ((completed_at IS NULL) = (response_status IS NULL))
);
CREATE INDEX idempotency_keys_expiry_idx ON idempotency_keys (expires_at);
