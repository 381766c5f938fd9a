package store

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// NewPayoutApproval is what a payout over the merchant's approval threshold records beside it:
// who asked (a member, who may not decide it, or an API key) and until when a second member
// may approve it.
type NewPayoutApproval struct {
	CreatedByMember *uuid.UUID
	CreatedByAPIKey *uuid.UUID
	Threshold       decimal.Decimal
	ExpiresAt       time.Time
}

// PayoutApproval is a payout's approval as recorded: what NewPayoutApproval said and, once
// decided, the decision (APPROVED, REJECTED, EXPIRED), who took it and when.
type PayoutApproval struct {
	NewPayoutApproval
	TransactionID uuid.UUID
	Decision      ApprovalDecision
	DecidedBy     *uuid.UUID
	DecidedAt     *time.Time
	Note          string
}

// ApprovalDecision is how a payout's wait for approval ended (payout_approvals.decision).
type ApprovalDecision string

// The decisions on a payout that waited for approval.
const (
	ApprovalApproved ApprovalDecision = "APPROVED"
	ApprovalRejected ApprovalDecision = "REJECTED"
	ApprovalExpired  ApprovalDecision = "EXPIRED"
)

func insertPayoutApproval(ctx context.Context, tx pgx.Tx, t sika.Transaction, a *NewPayoutApproval) error {
	if a == nil {
		return nil
	}
	_, err := tx.Exec(ctx, `INSERT INTO payout_approvals (transaction_id, merchant_id, environment, created_by_member,
			created_by_api_key, threshold, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		t.ID, t.Merchant, t.Environment, a.CreatedByMember, a.CreatedByAPIKey, a.Threshold, a.ExpiresAt)
	if err != nil {
		return fmt.Errorf("insert payout approval: %w", err)
	}
	return nil
}

const payoutApprovalColumns = `transaction_id, created_by_member, created_by_api_key, threshold, expires_at,
	coalesce(decision, ''), decided_by, decided_at, decision_note`

func scanPayoutApproval(row pgx.Row) (PayoutApproval, error) {
	var a PayoutApproval
	err := row.Scan(&a.TransactionID, &a.CreatedByMember, &a.CreatedByAPIKey, &a.Threshold, &a.ExpiresAt,
		&a.Decision, &a.DecidedBy, &a.DecidedAt, &a.Note)
	return a, err
}

// PayoutApprovalOf reads the approval of a payout that waited (or waits) for one; a payout that
// never needed one answers not found.
func (s *Store) PayoutApprovalOf(ctx context.Context, transactionID uuid.UUID) (PayoutApproval, error) {
	a, err := scanPayoutApproval(s.pool.QueryRow(ctx, `SELECT `+payoutApprovalColumns+` FROM payout_approvals WHERE transaction_id = $1`, transactionID))
	return a, rowErr(err, "Payout approval", "read payout approval")
}

// lockAwaitingPayout locks a payout's row and its approval's: a payout that never waited for
// an approval answers 409 not_awaiting_approval, another transaction 404.
func lockAwaitingPayout(ctx context.Context, tx pgx.Tx, where string, args ...any) (sika.Transaction, PayoutApproval, error) {
	t, err := scanTransaction(tx.QueryRow(ctx, `SELECT `+transactionColumns+` FROM transactions t WHERE `+where+` FOR UPDATE`, args...))
	if isNoRows(err) || (err == nil && t.Type != sika.TypePayout) {
		return t, PayoutApproval{}, sika.NotFound("Payout")
	}
	if err != nil {
		return t, PayoutApproval{}, fmt.Errorf("lock payout: %w", err)
	}
	a, err := scanPayoutApproval(tx.QueryRow(ctx, `SELECT `+payoutApprovalColumns+` FROM payout_approvals WHERE transaction_id = $1 FOR UPDATE`, t.ID))
	if isNoRows(err) {
		return t, a, sika.Errorf(sika.CodeNotAwaitingApproval, "Payout %s did not need an approval; it is %s.", t.Reference, t.Status)
	}
	if err != nil {
		return t, a, fmt.Errorf("lock payout approval: %w", err)
	}
	return t, a, nil
}

// DecidePayout records a second member's decision on a payout that waits for approval, under
// the payout's row lock, with its status log and events: approved, it becomes PENDING (its
// workflow, told by the caller, sends it); rejected, it ends FAILED approval_rejected and its
// hold is released (PAYOUT_REVERSAL). The member who created the payout may not decide it (403
// self_approval_forbidden); a payout that no longer waits, or whose approval has expired,
// answers 409 not_awaiting_approval.
func (s *Store) DecidePayout(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id, member uuid.UUID, approve bool, note string) (sika.Transaction, error) {
	var out sika.Transaction
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		t, a, err := lockAwaitingPayout(ctx, tx, `t.id = $1 AND t.merchant_id = $2 AND t.environment = $3`, id, merchantID, env)
		if err != nil {
			return err
		}
		if t.Status != sika.StatusAwaitingApproval {
			return sika.Errorf(sika.CodeNotAwaitingApproval, "Payout %s is %s; it does not wait for approval.", t.Reference, t.Status)
		}
		if !time.Now().Before(a.ExpiresAt) {
			return sika.Errorf(sika.CodeNotAwaitingApproval, "The approval of payout %s expired at %s.", t.Reference, a.ExpiresAt.UTC().Format(time.RFC3339))
		}
		if a.CreatedByMember != nil && *a.CreatedByMember == member {
			return sika.Errorf(sika.CodeSelfApprovalForbidden, "Payout %s was requested by you; another member must approve or reject it.", t.Reference)
		}
		var email string
		if err := tx.QueryRow(ctx, `SELECT email FROM members WHERE id = $1`, member).Scan(&email); err != nil {
			return fmt.Errorf("read deciding member: %w", err)
		}
		decision, reason := ApprovalApproved, "Approved by "+email
		if !approve {
			decision, reason = ApprovalRejected, "Rejected by "+email
		}
		if note != "" {
			reason += ": " + note
		}
		if err := decidePayoutApproval(ctx, tx, t.ID, decision, &member, note); err != nil {
			return err
		}
		if !approve {
			out, err = failAwaitingPayout(ctx, tx, t, sika.FailureApprovalRejected, reason, sika.TriggerClient)
			return err
		}
		if out, err = scanTransaction(tx.QueryRow(ctx, `UPDATE transactions t SET status = 'PENDING', updated_at = now()
			WHERE t.id = $1 RETURNING `+transactionColumns, t.ID)); err != nil {
			return fmt.Errorf("approve payout: %w", err)
		}
		from := sika.StatusAwaitingApproval
		if err := insertStatusLog(ctx, tx, out, &from, sika.StatusPending, reason, sika.TriggerClient); err != nil {
			return err
		}
		return transactionEvents(ctx, tx, out)
	})
	return out, err
}

// ExpirePayoutApproval ends a payout whose approval window has passed without a decision:
// FAILED approval_expired, its hold released, under its row lock. A payout decided meanwhile,
// or not yet due by the database's clock, is left as it is; its status is answered either way.
func (s *Store) ExpirePayoutApproval(ctx context.Context, id uuid.UUID) (sika.TransactionStatus, error) {
	var status sika.TransactionStatus
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		t, a, err := lockAwaitingPayout(ctx, tx, `t.id = $1`, id)
		if err != nil {
			return err
		}
		status = t.Status
		if t.Status != sika.StatusAwaitingApproval || time.Now().Before(a.ExpiresAt) {
			return nil
		}
		if err := decidePayoutApproval(ctx, tx, t.ID, ApprovalExpired, nil, ""); err != nil {
			return err
		}
		ended, err := failAwaitingPayout(ctx, tx, t, sika.FailureApprovalExpired,
			fmt.Sprintf("Not approved by %s: the approval window closed", a.ExpiresAt.UTC().Format(time.RFC3339)), sika.TriggerSystem)
		status = ended.Status
		return err
	})
	return status, err
}

func decidePayoutApproval(ctx context.Context, tx pgx.Tx, id uuid.UUID, decision ApprovalDecision, by *uuid.UUID, note string) error {
	if _, err := tx.Exec(ctx, `UPDATE payout_approvals SET decision = $2, decided_by = $3, decided_at = now(), decision_note = $4
		WHERE transaction_id = $1`, id, decision, by, note); err != nil {
		return fmt.Errorf("record payout approval decision: %w", err)
	}
	return nil
}

// failAwaitingPayout ends a locked AWAITING_APPROVAL payout FAILED with code and reason, its
// status log, the release of its hold (completionPosting) and its events. Nothing was sent: no
// attempt exists.
func failAwaitingPayout(ctx context.Context, tx pgx.Tx, t sika.Transaction, code, reason string, by sika.Trigger) (sika.Transaction, error) {
	out, err := scanTransaction(tx.QueryRow(ctx, `UPDATE transactions t SET status = 'FAILED', failure_code = $2, failure_message = $3,
			updated_at = now(), completed_at = now()
		WHERE t.id = $1 RETURNING `+transactionColumns, t.ID, code, reason))
	if err != nil {
		return out, fmt.Errorf("end payout awaiting approval: %w", err)
	}
	from := sika.StatusAwaitingApproval
	if err := insertStatusLog(ctx, tx, out, &from, sika.StatusFailed, reason, by); err != nil {
		return out, err
	}
	if p, ok := completionPosting(out); ok {
		if _, err := postLedgerEntry(ctx, tx, p); err != nil {
			return out, err
		}
	}
	return out, transactionEvents(ctx, tx, out)
}
