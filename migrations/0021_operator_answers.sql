-- Money safety, second pass (issue 21): no operator answer answered and forgotten, every flag
-- the code writes accepted by the schema, a late success credited at the price that was paid.

-- Every flag kind the code writes (store.FlagKind); the constraint of 0011 refused
-- PAYOUT_PAID_TWICE, so a payout paid twice rolled back instead of being flagged.
ALTER TABLE money_flags DROP CONSTRAINT money_flags_kind_check;
ALTER TABLE money_flags ADD CONSTRAINT money_flags_kind_check
    CHECK (kind IN ('REFUND_DUE', 'PAYOUT_PAID_AFTER_RELEASE', 'PAYOUT_PAID_TWICE', 'FAILED_AFTER_SUCCESS'));

-- The operators' inbox: a verified success about an attempt whose run is still deciding (a
-- closed attempt of a run that went on at the next gateway, a callback signalled to the
-- workflow, a status read handed to it) is written here before the operator or the caller is
-- answered. The run's end (store.CompletePayment) processes it in the same Postgres
-- transaction; the re-check schedule processes what is left (store.ProcessOperatorAnswers).
CREATE TABLE operator_answers (
    id                uuid PRIMARY KEY,
    attempt_id        uuid NOT NULL REFERENCES transaction_attempts (id),
    transaction_id    uuid NOT NULL REFERENCES transactions (id),
    status            text NOT NULL CHECK (status IN ('SUCCESS')),
    gateway_reference text NOT NULL DEFAULT '',
    source            text NOT NULL,
    received_at       timestamptz NOT NULL DEFAULT now(),
    processed_at      timestamptz,
    outcome           text NOT NULL DEFAULT '' CHECK (outcome IN ('', 'CREDITED', 'REFUND_DUE', 'PAYOUT_FLAGGED', 'ALREADY_RECORDED', 'IN_FLIGHT')),
    CHECK ((processed_at IS NULL) = (outcome = '' OR outcome = 'IN_FLIGHT'))
);
CREATE INDEX operator_answers_pending_idx ON operator_answers (transaction_id, received_at) WHERE processed_at IS NULL;

-- What an attempt asked the customer to pay: a retry may price the payment again on another
-- network, and a late success of an earlier run is credited at the price of the attempt that was
-- paid (NULL for attempts recorded before this migration: the transaction's price).
ALTER TABLE transaction_attempts
    ADD COLUMN network_id     uuid REFERENCES networks (id),
    ADD COLUMN network        text,
    ADD COLUMN customer_phone text,
    ADD COLUMN client_fee     numeric(20, 2),
    ADD COLUMN gateway_fee    numeric(20, 2),
    ADD COLUMN platform_fee   numeric(20, 2),
    ADD COLUMN debited_amount numeric(20, 2),
    ADD COLUMN net_amount     numeric(20, 2);
