-- Checkout sessions: single-use hosted payment pages. A session is PENDING until it is paid,
-- cancelled by the merchant or expired by its CheckoutExpiry workflow; it becomes PAID at most
-- once (CompletePayment moves it with a conditional UPDATE in the payment's Postgres transaction).
CREATE TABLE checkout_sessions (
    id                uuid PRIMARY KEY,
    merchant_id       uuid NOT NULL REFERENCES merchants (id),
    environment       text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    created_by_member uuid,
    slug              text NOT NULL UNIQUE,
    checkout_url      text NOT NULL,
    amount            numeric(20, 2) NOT NULL CHECK (amount > 0),
    currency          char(3) NOT NULL,
    description       text NOT NULL DEFAULT '',
    country           text NOT NULL DEFAULT '',
    customer_email    text NOT NULL,
    customer_name     text NOT NULL,
    customer_phone    text NOT NULL DEFAULT '',
    return_url        text NOT NULL DEFAULT '',
    metadata          jsonb NOT NULL DEFAULT '{}',
    fee_charge_mode   text NOT NULL DEFAULT '' CHECK (fee_charge_mode IN ('', 'ADD_ON', 'DEDUCTED')),
    status            text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'PAID', 'EXPIRED', 'CANCELLED')),
    expires_at        timestamptz,
    transaction_id    uuid,
    payment_link_id   uuid,
    paid_at           timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX checkout_sessions_list ON checkout_sessions (merchant_id, environment, created_at DESC, id DESC);

-- Payment links: reusable hosted pages, one transaction per payment. usage_limit caps the
-- transactions a link generates; CreateLinkPayment counts them with the link row locked, in
-- the Postgres transaction that inserts the new one.
CREATE TABLE payment_links (
    id                uuid PRIMARY KEY,
    merchant_id       uuid NOT NULL REFERENCES merchants (id),
    environment       text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    created_by_member uuid,
    name              text NOT NULL,
    slug              text NOT NULL UNIQUE,
    url               text NOT NULL,
    description       text NOT NULL DEFAULT '',
    amount_type       text NOT NULL DEFAULT 'FIXED' CHECK (amount_type IN ('FIXED', 'FREE')),
    amount            numeric(20, 2) CHECK (amount > 0),
    min_amount        numeric(20, 2) CHECK (min_amount > 0),
    currency          char(3) NOT NULL,
    country           text NOT NULL DEFAULT '',
    usage_limit       integer CHECK (usage_limit > 0),
    is_active         boolean NOT NULL DEFAULT true,
    metadata          jsonb NOT NULL DEFAULT '{}',
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now(),
    deleted_at        timestamptz
);

CREATE INDEX payment_links_list ON payment_links (merchant_id, environment, created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX transactions_payment_link_idx ON transactions (payment_link_id, created_at DESC, id DESC) WHERE payment_link_id IS NOT NULL;
CREATE INDEX transactions_checkout_session_idx ON transactions (checkout_session_id, created_at DESC) WHERE checkout_session_id IS NOT NULL;
