-- Money safety: a run ends only on a definite answer, and every answer that comes later is
-- reconciled (issue 17).

-- What the operator last answered about an attempt that is not decided (NOT_FOUND, UNKNOWN,
-- AMBIGUOUS, UNAVAILABLE, a cancel's answer), shown to support beside the attempt.
ALTER TABLE transaction_attempts
    ADD COLUMN last_answer    text NOT NULL DEFAULT '',
    ADD COLUMN last_answer_at timestamptz,
    -- An attempt that ended on our side without the operator's final word (expired with its
    -- cancel unclear) is re-read at its gateway until recheck_until (the operator's
    -- late-success window); rechecked_at is the last read.
    ADD COLUMN recheck_until  timestamptz,
    ADD COLUMN rechecked_at   timestamptz;
CREATE INDEX transaction_attempts_recheck_idx ON transaction_attempts (recheck_until) WHERE recheck_until IS NOT NULL;

-- Why a transaction is still PENDING when it waits for the operator rather than the customer
-- (a payout whose send was unclear); '' otherwise.
ALTER TABLE transactions ADD COLUMN pending_reason text NOT NULL DEFAULT '';

-- A collection is credited once per attempt that the operator reports paid: the attempt of a
-- ledger entry makes a second credit for the same success impossible.
-- Other movements stay one per transaction and type.
ALTER TABLE ledger_entries ADD COLUMN attempt_id uuid REFERENCES transaction_attempts (id);
CREATE UNIQUE INDEX ledger_entries_attempt_type_key ON ledger_entries (attempt_id, type) WHERE attempt_id IS NOT NULL;
DROP INDEX ledger_entries_transaction_type_key;
CREATE UNIQUE INDEX ledger_entries_transaction_type_key ON ledger_entries (transaction_id, type)
    WHERE transaction_id IS NOT NULL AND attempt_id IS NULL;

-- Money that needs a person: a second success on one transaction or checkout session (the
-- customer paid twice: refund due), a payout paid after its hold was released.
CREATE TABLE money_flags (
    id              uuid PRIMARY KEY,
    kind            text NOT NULL CHECK (kind IN ('REFUND_DUE', 'PAYOUT_PAID_AFTER_RELEASE')),
    transaction_id  uuid NOT NULL REFERENCES transactions (id),
    attempt_id      uuid REFERENCES transaction_attempts (id),
    merchant_id     uuid NOT NULL REFERENCES merchants (id),
    environment     text NOT NULL CHECK (environment IN ('TEST', 'LIVE')),
    amount          numeric(20, 2) NOT NULL,
    currency        text NOT NULL,
    reason          text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    resolved_at     timestamptz,
    resolved_by     uuid REFERENCES members (id),
    resolution_note text NOT NULL DEFAULT '',
    UNIQUE (kind, attempt_id)
);
CREATE INDEX money_flags_open_idx ON money_flags (created_at) WHERE resolved_at IS NULL;

-- Every staff action on money (who, when, what, why), append-only.
CREATE TABLE staff_actions (
    id             uuid PRIMARY KEY,
    staff_id       uuid NOT NULL REFERENCES members (id),
    action         text NOT NULL,
    transaction_id uuid REFERENCES transactions (id),
    reason         text NOT NULL,
    detail         jsonb NOT NULL DEFAULT '{}',
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX staff_actions_transaction_idx ON staff_actions (transaction_id, created_at);
