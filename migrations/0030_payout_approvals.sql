-- A second member's approval of a single payout (issue 22; contract §7): a payout whose debited
-- amount is over the merchant's payout_approval_threshold is recorded AWAITING_APPROVAL, its money
-- held like a PENDING payout's, and waits for a member other than its creator. Approved, it
-- becomes PENDING and its workflow sends it; rejected or not approved within
-- approval_window_hours, it ends FAILED (approval_rejected, approval_expired) and its hold is
-- released. The decision and who took it are kept beside the transaction, not on it: the payment
-- path's row stays as it was.
ALTER TABLE transactions DROP CONSTRAINT transactions_status_check;
ALTER TABLE transactions ADD CONSTRAINT transactions_status_check
    CHECK (status IN ('AWAITING_APPROVAL', 'PENDING', 'SUCCESS', 'FAILED', 'CANCELLED'));
ALTER TABLE transaction_status_logs DROP CONSTRAINT transaction_status_logs_from_status_check;
ALTER TABLE transaction_status_logs ADD CONSTRAINT transaction_status_logs_from_status_check
    CHECK (from_status IN ('AWAITING_APPROVAL', 'PENDING', 'SUCCESS', 'FAILED', 'CANCELLED'));
ALTER TABLE transaction_status_logs DROP CONSTRAINT transaction_status_logs_to_status_check;
ALTER TABLE transaction_status_logs ADD CONSTRAINT transaction_status_logs_to_status_check
    CHECK (to_status IN ('AWAITING_APPROVAL', 'PENDING', 'SUCCESS', 'FAILED', 'CANCELLED'));

CREATE TABLE payout_approvals (
    transaction_id     uuid PRIMARY KEY REFERENCES transactions (id),
    merchant_id        uuid NOT NULL REFERENCES merchants (id),
    environment        text NOT NULL,
    -- Who asked: a member (who may not decide it) or an API key (any approver may).
    created_by_member  uuid REFERENCES members (id),
    created_by_api_key uuid,
    threshold          numeric(20, 2) NOT NULL CHECK (threshold > 0),
    expires_at         timestamptz NOT NULL,
    decision           text CHECK (decision IN ('APPROVED', 'REJECTED', 'EXPIRED')),
    decided_by         uuid REFERENCES members (id),
    decided_at         timestamptz,
    decision_note      text NOT NULL DEFAULT '',
    created_at         timestamptz NOT NULL DEFAULT now(),
    CHECK ((decision IS NULL) = (decided_at IS NULL)),
    CHECK ((decided_by IS NULL) = (decision IS NULL OR decision = 'EXPIRED')),
    CHECK (created_by_member IS NULL OR decided_by IS NULL OR decided_by <> created_by_member)
);
-- The dashboard's "waiting for approval" list of a merchant.
CREATE INDEX payout_approvals_waiting_idx ON payout_approvals (merchant_id, environment, expires_at)
    WHERE decision IS NULL;
