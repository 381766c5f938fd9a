-- Payout batches (issue 22): up to 1,000 payouts sent as one order. The batch's total (each
-- item's debited amount, fees included) is held on the merchant's wallets when the batch is
-- accepted, with one ledger entry per wallet that names the batch; when an item is sent, its
-- part of that hold moves to the item's own payout transaction (a PAYOUT_REVERSAL of the batch
-- and the transaction's PAYOUT_HOLD, in one Postgres transaction), which is then settled or
-- released like any payout. Cancelled, rejected and expired items release their part.
CREATE TABLE payout_batches (
    id                  uuid PRIMARY KEY,
    reference           text NOT NULL UNIQUE,
    merchant_id         uuid NOT NULL REFERENCES merchants (id),
    environment         text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    status              text NOT NULL CHECK (status IN ('AWAITING_APPROVAL', 'PROCESSING', 'COMPLETED', 'CANCELLED', 'REJECTED', 'EXPIRED')),
    description         text NOT NULL DEFAULT '',
    item_count          int NOT NULL CHECK (item_count BETWEEN 1 AND 1000),
    -- Who asked for it: a dashboard member, or an API key (which has no member).
    created_by_member   uuid REFERENCES members (id),
    created_by_api_key  uuid REFERENCES api_keys (id),
    -- A second member's decision, when the merchant's settings ask for one.
    approval_expires_at timestamptz,
    decided_by          uuid REFERENCES members (id),
    decided_at          timestamptz,
    decision_note       text NOT NULL DEFAULT '',
    cancel_requested_at timestamptz,
    idempotency_key     text,
    idempotency_fingerprint bytea,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    completed_at        timestamptz,
    CHECK (created_by_member IS NOT NULL OR created_by_api_key IS NOT NULL),
    CHECK (decided_by IS NULL OR created_by_member IS NULL OR decided_by <> created_by_member),
    CHECK ((status = 'AWAITING_APPROVAL') <= (approval_expires_at IS NOT NULL)),
    CHECK ((completed_at IS NOT NULL) = (status NOT IN ('AWAITING_APPROVAL', 'PROCESSING')))
);
CREATE INDEX payout_batches_merchant_created_idx ON payout_batches (merchant_id, environment, created_at DESC, id DESC);
CREATE UNIQUE INDEX payout_batches_idempotency_key ON payout_batches (merchant_id, environment, idempotency_key)
    WHERE idempotency_key IS NOT NULL;

-- One payout of a batch, priced when the batch is accepted (the fee shown is the fee charged).
-- status is the item's own: QUEUED until it is sent, then SENT (its transaction's status says
-- how it ended), or CANCELLED (the batch was cancelled, rejected or expired first).
CREATE TABLE payout_batch_items (
    id               uuid PRIMARY KEY,
    batch_id         uuid NOT NULL REFERENCES payout_batches (id),
    merchant_id      uuid NOT NULL REFERENCES merchants (id),
    environment      text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    index            int NOT NULL CHECK (index >= 0 AND index < 1000),
    reference        text NOT NULL CHECK (length(reference) BETWEEN 1 AND 100),
    status           text NOT NULL DEFAULT 'QUEUED' CHECK (status IN ('QUEUED', 'SENT', 'CANCELLED')),
    requested_amount numeric(20, 2) NOT NULL CHECK (requested_amount > 0),
    client_fee       numeric(20, 2) NOT NULL CHECK (client_fee >= 0),
    gateway_fee      numeric(20, 2) NOT NULL CHECK (gateway_fee >= 0),
    platform_fee     numeric(20, 2) NOT NULL CHECK (platform_fee >= 0),
    debited_amount   numeric(20, 2) NOT NULL CHECK (debited_amount > 0),
    net_amount       numeric(20, 2) NOT NULL CHECK (net_amount > 0),
    fee_charge_mode  text NOT NULL CHECK (fee_charge_mode IN ('ADD_ON', 'DEDUCTED')),
    currency         char(3) NOT NULL,
    country          char(2) NOT NULL REFERENCES countries (iso_code),
    network_id       uuid NOT NULL REFERENCES networks (id),
    network          text NOT NULL,
    phone            text NOT NULL,
    description      text NOT NULL DEFAULT '',
    transaction_id   uuid UNIQUE REFERENCES transactions (id),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (batch_id, index),
    UNIQUE (batch_id, reference),
    CHECK ((status = 'SENT') = (transaction_id IS NOT NULL)),
    CHECK (client_fee = gateway_fee + platform_fee)
);
CREATE INDEX payout_batch_items_batch_idx ON payout_batch_items (batch_id, created_at DESC, id DESC);

-- The batch a hold or its release belongs to (transaction_id is NULL on those entries).
ALTER TABLE ledger_entries ADD COLUMN payout_batch_id uuid REFERENCES payout_batches (id);
CREATE INDEX ledger_entries_payout_batch_idx ON ledger_entries (payout_batch_id) WHERE payout_batch_id IS NOT NULL;

-- The events of a batch (payout_batch.completed) name no transaction.
