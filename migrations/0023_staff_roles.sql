-- Staff roles (issue 24): the one is_staff flag becomes a role, least trusted first
-- SUPPORT_READONLY, SUPPORT_AGENT, MONEY_APPROVER, ADMIN (sika.StaffRole); NULL is not staff.
-- Every member who was staff becomes ADMIN: nobody loses what they could do.
ALTER TABLE members ADD COLUMN staff_role text
    CHECK (staff_role IN ('SUPPORT_READONLY', 'SUPPORT_AGENT', 'MONEY_APPROVER', 'ADMIN'));
UPDATE members SET staff_role = 'ADMIN' WHERE is_staff;
ALTER TABLE members DROP COLUMN is_staff;
CREATE INDEX members_staff_idx ON members (staff_role) WHERE staff_role IS NOT NULL;

-- Two-person money decisions: one staff member proposes (the resolution of an unclear payout),
-- another approves or rejects it; both are audited in staff_actions. At most one open proposal
-- per transaction; the proposer can never be the one who decides.
CREATE TABLE money_decisions (
    id               uuid PRIMARY KEY,
    kind             text NOT NULL CHECK (kind IN ('RESOLVE_UNCLEAR_PAYOUT')),
    transaction_id   uuid NOT NULL REFERENCES transactions (id),
    requested_status text NOT NULL, -- SUCCESS or FAILED (api.SupportDecision.Validate)
    reason           text NOT NULL,
    proposed_by      uuid NOT NULL REFERENCES members (id),
    proposed_at      timestamptz NOT NULL DEFAULT now(),
    status           text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'APPROVED', 'REJECTED')),
    decided_by       uuid REFERENCES members (id),
    decided_at       timestamptz,
    decision_note    text NOT NULL DEFAULT '',
    -- what applying it gave (the payout's status, who decided it: operator or support)
    outcome          jsonb,
    CHECK ((status = 'PENDING') = (decided_by IS NULL)),
    CHECK (decided_by IS NULL OR decided_by <> proposed_by)
);
CREATE UNIQUE INDEX money_decisions_one_open_idx ON money_decisions (transaction_id) WHERE status = 'PENDING';
CREATE INDEX money_decisions_status_idx ON money_decisions (status, proposed_at);
