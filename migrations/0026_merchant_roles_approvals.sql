-- Merchant roles (issue 22): besides OWNER and ADMIN, DEVELOPER (keys, IP whitelist, webhooks;
-- no money, no settings) and VIEWER (reads only). sika.MembershipRole.Can is the table.
ALTER TABLE memberships DROP CONSTRAINT memberships_role_check;
ALTER TABLE memberships ADD CONSTRAINT memberships_role_check CHECK (role IN ('OWNER', 'ADMIN', 'DEVELOPER', 'VIEWER'));

-- A second member's approval: payout batches whose total (per currency, fees included) is over
-- the threshold wait for it (AWAITING_APPROVAL, their money held) for approval_window_hours, then
-- expire and release their hold. NULL: no approval asked.
ALTER TABLE merchant_settings ADD COLUMN payout_approval_threshold numeric(20, 2) CHECK (payout_approval_threshold > 0);
ALTER TABLE merchant_settings ADD COLUMN approval_window_hours int NOT NULL DEFAULT 24
    CHECK (approval_window_hours BETWEEN 1 AND 168);
