-- Collections: transactions with their attempts and append-only status logs, wallets and their
-- ledger, the gateway routing table, network amount limits and the workflow-start outbox.

-- Amount limits of a network, in its country's currency.
ALTER TABLE networks ADD COLUMN min_amount numeric(20, 2) NOT NULL DEFAULT 100 CHECK (min_amount > 0);
ALTER TABLE networks ADD COLUMN max_amount numeric(20, 2) NOT NULL DEFAULT 1000000 CHECK (max_amount > 0);
ALTER TABLE networks ADD CONSTRAINT networks_amount_bounds CHECK (min_amount <= max_amount);
UPDATE networks n SET min_amount = l.min_amount, max_amount = l.max_amount
FROM countries c, (VALUES ('XOF', 100, 2000000), ('XAF', 100, 2000000), ('GNF', 1000, 20000000), ('CDF', 500, 5000000))
    AS l (currency, min_amount, max_amount)
WHERE c.id = n.country_id AND c.default_currency = l.currency;

-- Routing table: per network and environment, the gateways in priority order. TEST routes to
-- the two sandbox gateways (so that fallback is real); LIVE routes are added with the operator
-- adapters. A disabled route is skipped; health is observed at run time by the router.
CREATE TABLE gateway_routes (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    network_id  uuid NOT NULL REFERENCES networks (id),
    environment text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    gateway     text NOT NULL,
    priority    int NOT NULL CHECK (priority > 0),
    is_enabled  boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (network_id, environment, gateway),
    UNIQUE (network_id, environment, priority)
);
INSERT INTO gateway_routes (network_id, environment, gateway, priority)
SELECT n.id, 'TEST', g.gateway, g.priority FROM networks n
CROSS JOIN (VALUES ('sandbox-a', 1), ('sandbox-b', 2)) AS g (gateway, priority);

CREATE TABLE wallets (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    merchant_id      uuid NOT NULL REFERENCES merchants (id),
    environment      text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    country          char(2) NOT NULL REFERENCES countries (iso_code),
    currency         char(3) NOT NULL,
    available_amount numeric(20, 2) NOT NULL DEFAULT 0 CHECK (available_amount >= 0),
    pending_amount   numeric(20, 2) NOT NULL DEFAULT 0 CHECK (pending_amount >= 0),
    is_frozen        boolean NOT NULL DEFAULT false,
    entry_count      bigint NOT NULL DEFAULT 0,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (merchant_id, environment, country)
);

CREATE TABLE transactions (
    id                  uuid PRIMARY KEY,
    reference           text NOT NULL UNIQUE,
    merchant_id         uuid NOT NULL REFERENCES merchants (id),
    environment         text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    transaction_type    text NOT NULL CHECK (transaction_type IN ('PAIEMENT', 'RECHARGE', 'RETRAIT', 'TRANSFERT')),
    flow_direction      text NOT NULL GENERATED ALWAYS AS (
                            CASE WHEN transaction_type IN ('PAIEMENT', 'RECHARGE') THEN 'INBOUND' ELSE 'OUTBOUND' END) STORED,
    status              text NOT NULL CHECK (status IN ('PENDING', 'SUCCESS', 'FAILED', 'CANCELLED')),
    requested_amount    numeric(20, 2) NOT NULL CHECK (requested_amount > 0),
    client_fee          numeric(20, 2) NOT NULL CHECK (client_fee >= 0),
    debited_amount      numeric(20, 2) NOT NULL CHECK (debited_amount > 0),
    gateway_fee         numeric(20, 2) NOT NULL CHECK (gateway_fee >= 0),
    platform_fee        numeric(20, 2) NOT NULL CHECK (platform_fee >= 0),
    net_amount          numeric(20, 2) NOT NULL CHECK (net_amount > 0),
    currency            char(3) NOT NULL,
    original_amount     numeric(20, 2),
    original_currency   char(3),
    exchange_rate       numeric(24, 10),
    country             char(2) NOT NULL REFERENCES countries (iso_code),
    network_id          uuid NOT NULL REFERENCES networks (id),
    network             text NOT NULL,
    customer_name       text NOT NULL DEFAULT '',
    customer_email      text NOT NULL DEFAULT '',
    customer_phone      text NOT NULL DEFAULT '',
    recipient           text NOT NULL DEFAULT '',
    description         text NOT NULL DEFAULT '',
    metadata            jsonb NOT NULL DEFAULT '{}',
    fee_charge_mode     text NOT NULL CHECK (fee_charge_mode IN ('ADD_ON', 'DEDUCTED')),
    checkout_session_id uuid,
    payment_link_id     uuid,
    -- A pre-payment OTP waits here for the first gateway call, which clears it.
    otp                 text,
    gateway             text NOT NULL DEFAULT '',
    gateway_reference   text NOT NULL DEFAULT '',
    failure_code        text NOT NULL DEFAULT '',
    failure_message     text NOT NULL DEFAULT '',
    idempotency_key     text,
    run                 int NOT NULL DEFAULT 1 CHECK (run > 0),
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    completed_at        timestamptz,
    CHECK (client_fee = gateway_fee + platform_fee),
    CHECK ((original_amount IS NULL) = (original_currency IS NULL) AND (original_currency IS NULL) = (exchange_rate IS NULL))
);
CREATE INDEX transactions_merchant_created_idx ON transactions (merchant_id, environment, created_at DESC, id DESC);
CREATE UNIQUE INDEX transactions_idempotency_key ON transactions (merchant_id, environment, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

CREATE TABLE transaction_attempts (
    id                uuid PRIMARY KEY,
    transaction_id    uuid NOT NULL REFERENCES transactions (id),
    merchant_id       uuid NOT NULL REFERENCES merchants (id),
    environment       text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    run               int NOT NULL,
    sequence          int NOT NULL,
    gateway           text NOT NULL,
    priority          int NOT NULL,
    status            text NOT NULL CHECK (status IN ('PENDING', 'SUCCESS', 'FAILED')),
    gateway_reference text NOT NULL DEFAULT '',
    failure_code      text NOT NULL DEFAULT '',
    failure_message   text NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    completed_at      timestamptz,
    UNIQUE (transaction_id, run, sequence)
);
CREATE INDEX transaction_attempts_merchant_idx ON transaction_attempts (merchant_id, environment, created_at DESC, id DESC);

CREATE TABLE transaction_status_logs (
    id             uuid PRIMARY KEY,
    transaction_id uuid NOT NULL REFERENCES transactions (id),
    merchant_id    uuid NOT NULL REFERENCES merchants (id),
    environment    text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    from_status    text CHECK (from_status IN ('PENDING', 'SUCCESS', 'FAILED', 'CANCELLED')),
    to_status      text NOT NULL CHECK (to_status IN ('PENDING', 'SUCCESS', 'FAILED', 'CANCELLED')),
    reason         text NOT NULL DEFAULT '',
    triggered_by   text NOT NULL CHECK (triggered_by IN ('SYSTEM', 'ADMIN', 'CLIENT', 'WEBHOOK_CALLBACK')),
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX transaction_status_logs_tx_idx ON transaction_status_logs (transaction_id, created_at, id);
CREATE INDEX transaction_status_logs_merchant_idx ON transaction_status_logs (merchant_id, environment, created_at DESC, id DESC);

-- Status logs are history: never rewritten.
CREATE FUNCTION refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END $$;
CREATE TRIGGER transaction_status_logs_append_only BEFORE UPDATE OR DELETE ON transaction_status_logs
    FOR EACH ROW EXECUTE FUNCTION refuse_change();

-- Ledger: every wallet change, with the available and pending amounts around it. sequence orders
-- a wallet's entries (each entry's balance_after is the next one's balance_before). At most one
-- entry of a type per transaction, which makes crediting a collection idempotent.
CREATE TABLE ledger_entries (
    id                 uuid PRIMARY KEY,
    wallet_id          uuid NOT NULL REFERENCES wallets (id),
    merchant_id        uuid NOT NULL REFERENCES merchants (id),
    environment        text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    sequence           bigint NOT NULL,
    country            char(2) NOT NULL,
    currency           char(3) NOT NULL,
    type               text NOT NULL CHECK (type IN ('COLLECTION', 'PAYOUT_HOLD', 'PAYOUT', 'PAYOUT_REVERSAL', 'TRANSFER_OUT', 'TRANSFER_IN', 'ADJUSTMENT')),
    direction          text NOT NULL CHECK (direction IN ('CREDIT', 'DEBIT')),
    amount             numeric(20, 2) NOT NULL CHECK (amount > 0),
    available_delta    numeric(20, 2) NOT NULL,
    pending_delta      numeric(20, 2) NOT NULL,
    balance_before     numeric(20, 2) NOT NULL,
    balance_after      numeric(20, 2) NOT NULL,
    pending_before     numeric(20, 2) NOT NULL,
    pending_after      numeric(20, 2) NOT NULL,
    transaction_id     uuid REFERENCES transactions (id),
    settlement_id      uuid,
    wallet_transfer_id uuid,
    description        text NOT NULL DEFAULT '',
    created_at         timestamptz NOT NULL DEFAULT now(),
    UNIQUE (wallet_id, sequence),
    CHECK (balance_after = balance_before + available_delta),
    CHECK (pending_after = pending_before + pending_delta)
);
CREATE UNIQUE INDEX ledger_entries_transaction_type_key ON ledger_entries (transaction_id, type) WHERE transaction_id IS NOT NULL;
CREATE INDEX ledger_entries_merchant_idx ON ledger_entries (merchant_id, environment, created_at DESC, id DESC);
CREATE TRIGGER ledger_entries_append_only BEFORE UPDATE OR DELETE ON ledger_entries
    FOR EACH ROW EXECUTE FUNCTION refuse_change();

-- Outbox of workflow starts: written in the transaction that creates the record, removed once
-- the workflow is started; the sweeper starts whatever a crash left behind.
CREATE TABLE workflow_outbox (
    id              bigserial PRIMARY KEY,
    workflow_id     text NOT NULL,
    workflow_type   text NOT NULL,
    input           jsonb NOT NULL,
    attempts        int NOT NULL DEFAULT 0,
    last_error      text NOT NULL DEFAULT '',
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX workflow_outbox_due_idx ON workflow_outbox (next_attempt_at);
