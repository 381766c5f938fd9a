-- Payout methods, settlements and wallet transfers.

-- A wallet transfer has no network.
ALTER TABLE transactions ALTER COLUMN network_id DROP NOT NULL;

CREATE TABLE merchant_payout_methods (
    id                  uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    merchant_id         uuid NOT NULL REFERENCES merchants (id),
    environment         text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    type                text NOT NULL CHECK (type IN ('MOBILE_MONEY', 'BANK')),
    label               text NOT NULL DEFAULT '',
    is_active           boolean NOT NULL DEFAULT true,
    is_verified         boolean NOT NULL DEFAULT false,
    verified_by_admin   uuid REFERENCES members (id),
    verified_at         timestamptz,
    network_id          uuid REFERENCES networks (id),
    phone_number        text,
    bank_name           text,
    account_holder_name text,
    account_number      text,
    iban                text,
    swift_bic           text,
    bank_code           text,
    branch_code         text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    CHECK (type <> 'MOBILE_MONEY' OR (network_id IS NOT NULL AND phone_number IS NOT NULL)),
    CHECK (type <> 'BANK' OR (account_holder_name IS NOT NULL AND (account_number IS NOT NULL OR iban IS NOT NULL)))
);
CREATE INDEX merchant_payout_methods_merchant_idx ON merchant_payout_methods (merchant_id, environment, created_at DESC);

-- A settlement moves available balance to one of the merchant's own verified payout methods;
-- its money moves through a RETRAIT transaction (hold, then settle or release).
CREATE TABLE settlements (
    id               uuid PRIMARY KEY,
    merchant_id      uuid NOT NULL REFERENCES merchants (id),
    environment      text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    payout_method_id uuid NOT NULL REFERENCES merchant_payout_methods (id),
    transaction_id   uuid NOT NULL UNIQUE REFERENCES transactions (id),
    amount           numeric(20, 2) NOT NULL CHECK (amount > 0),
    currency         char(3) NOT NULL,
    country          char(2) NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX settlements_merchant_idx ON settlements (merchant_id, environment, created_at DESC, id DESC);

-- A wallet transfer moves money between two wallets of one merchant at the current rate, in one
-- Postgres transaction (a TRANSFERT transaction with an entry on each wallet).
CREATE TABLE wallet_transfers (
    id              uuid PRIMARY KEY,
    merchant_id     uuid NOT NULL REFERENCES merchants (id),
    environment     text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    transaction_id  uuid NOT NULL UNIQUE REFERENCES transactions (id),
    from_country    char(2) NOT NULL,
    to_country      char(2) NOT NULL,
    from_currency   char(3) NOT NULL,
    to_currency     char(3) NOT NULL,
    amount          numeric(20, 2) NOT NULL CHECK (amount > 0),
    credited_amount numeric(20, 2) NOT NULL CHECK (credited_amount > 0),
    exchange_rate   numeric(24, 10) NOT NULL CHECK (exchange_rate > 0),
    created_at      timestamptz NOT NULL DEFAULT now(),
    CHECK (from_country <> to_country)
);
CREATE INDEX wallet_transfers_merchant_idx ON wallet_transfers (merchant_id, environment, created_at DESC, id DESC);
