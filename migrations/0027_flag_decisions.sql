-- Money flags decided under the two-person rule (issue 24, item 7; issue 21): the refund of a
-- REFUND_DUE flag, and the settlement or release of a payout held again after the operator
-- paid it past its release (PAYOUT_PAID_AFTER_RELEASE). One staff member proposes, a money
-- approver who did not propose it approves; both are audited (staff_actions).
ALTER TABLE money_decisions DROP CONSTRAINT money_decisions_kind_check;
ALTER TABLE money_decisions ADD CONSTRAINT money_decisions_kind_check
    CHECK (kind IN ('RESOLVE_UNCLEAR_PAYOUT', 'REFUND_FLAG', 'SETTLE_REHELD_PAYOUT'));
-- The flag a decision is about, and for a refund the amount to give back (in the flag's
-- currency). A refund's requested_status is '' (it ends no transaction).
ALTER TABLE money_decisions ADD COLUMN flag_id uuid REFERENCES money_flags (id);
ALTER TABLE money_decisions ADD COLUMN amount numeric(20, 2) CHECK (amount > 0);
ALTER TABLE money_decisions ADD CONSTRAINT money_decisions_flag_link CHECK (
    (kind = 'RESOLVE_UNCLEAR_PAYOUT') = (flag_id IS NULL)
    AND (kind = 'REFUND_FLAG') = (amount IS NOT NULL));
CREATE INDEX money_decisions_flag_idx ON money_decisions (flag_id) WHERE flag_id IS NOT NULL;

-- The latest refund issued for a REFUND_DUE flag: the flag closes in the Postgres transaction
-- that records that refund's success; a refund that fails leaves the flag open, and another can
-- then be issued (never two in flight: the refund's creation locks the flag's row).
ALTER TABLE money_flags ADD COLUMN refund_id uuid REFERENCES transactions (id);
CREATE INDEX money_flags_refund_idx ON money_flags (refund_id) WHERE refund_id IS NOT NULL;
