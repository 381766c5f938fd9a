package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// Money flags are decided under the two-person rule (issue 24): the refund of a REFUND_DUE flag
// (DecisionRefundFlag) and the settlement or release of a payout held again after the operator
// paid it past its release (DecisionSettleReheldPayout). A flag closes only when what was decided
// is done: a refund's success, or the settlement or release recorded.

// MoneyFlag returns a flag, or not_found.
func (s *Store) MoneyFlag(ctx context.Context, id uuid.UUID) (MoneyFlag, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+flagColumns+flagFrom+` WHERE f.id = $1`, id), scanFlag, "Money flag", "select money flag")
}

// CheckFlagOpen refuses a flag that is closed or not of kind.
func CheckFlagOpen(f MoneyFlag, kind FlagKind) error {
	if f.Kind != kind {
		return sika.FieldError("non_field_errors", fmt.Sprintf("This is a %s flag; only a %s flag is decided this way.", f.Kind, kind))
	}
	if f.ResolvedAt != nil {
		return sika.FieldError("non_field_errors", "This flag is already resolved: "+f.ResolutionNote)
	}
	return nil
}

// CheckNoRefundInFlight refuses a refund of a flag whose latest refund is still in flight or
// succeeded: a flag is refunded once.
func CheckNoRefundInFlight(f MoneyFlag) error {
	if f.Refund != nil && f.RefundStatus != nil && *f.RefundStatus != sika.StatusFailed {
		return sika.FieldError("non_field_errors", fmt.Sprintf("Refund %s of this flag is %s: wait for its outcome (a refund that fails leaves the flag open).",
			*f.Refund, *f.RefundStatus))
	}
	if f.Refund != nil && f.RefundReheld {
		return sika.FieldError("non_field_errors", fmt.Sprintf("Refund %s of this flag failed, but its operator reported it paid afterwards: its "+
			"PAYOUT_PAID_AFTER_RELEASE flag decides it first (settled, it refunds the customer and closes this flag; released, a new refund can follow).",
			*f.Refund))
	}
	return nil
}

// linkFlagRefund records refund r as the refund of a REFUND_DUE flag, in r's creation (the
// caller's Postgres transaction): the flag's row is locked, so that two refunds of one flag are
// never in flight at once; a flag closed, or whose latest refund is in flight or succeeded,
// refuses it and nothing is written.
func linkFlagRefund(ctx context.Context, tx pgx.Tx, flagID uuid.UUID, r sika.Transaction) error {
	f, err := one(tx.QueryRow(ctx, `SELECT `+flagColumns+flagFrom+` WHERE f.id = $1 FOR UPDATE OF f`, flagID), scanFlag, "Money flag", "lock money flag")
	if err != nil {
		return err
	}
	if err := CheckFlagOpen(f, FlagRefundDue); err != nil {
		return err
	}
	if err := CheckNoRefundInFlight(f); err != nil {
		return err
	}
	if f.Transaction != *r.RefundedTransaction || f.Merchant != r.Merchant || f.Environment != r.Environment {
		return fmt.Errorf("refund %s is not of flag %s's collection", r.ID, f.ID)
	}
	if _, err := tx.Exec(ctx, `UPDATE money_flags SET refund_id = $2 WHERE id = $1`, flagID, r.ID); err != nil {
		return fmt.Errorf("link flag refund: %w", err)
	}
	return nil
}

// closeRefundedFlag closes the flag whose refund r is, once r succeeded (settleRefund, in the
// completion's Postgres transaction), naming the approver of the refund's decision.
func closeRefundedFlag(ctx context.Context, tx pgx.Tx, r sika.Transaction) error {
	if _, err := tx.Exec(ctx, `UPDATE money_flags f SET resolved_at = now(),
			resolved_by = (SELECT d.decided_by FROM money_decisions d WHERE d.flag_id = f.id AND d.status = 'APPROVED'
				ORDER BY d.decided_at DESC LIMIT 1),
			resolution_note = 'Refunded: ' || $2 || ' gave the customer back ' || $3 || ' ' || f.currency || '.'
		WHERE f.refund_id = $1 AND f.resolved_at IS NULL`, r.ID, r.Reference, sika.FormatAmount(r.RequestedAmount.Decimal)); err != nil {
		return fmt.Errorf("close refunded flag: %w", err)
	}
	return nil
}

// ReheldOutcome is what settling or releasing a payout held again did.
type ReheldOutcome struct {
	Flag        uuid.UUID              `json:"flag"`
	Status      sika.TransactionStatus `json:"status"`
	Held        sika.Amount            `json:"held"`
	Settled     sika.Amount            `json:"settled"`
	Released    sika.Amount            `json:"released"`
	Shortfall   sika.Amount            `json:"shortfall"`
	Transaction uuid.UUID              `json:"transaction"`
}

// SettleReheldPayout applies an approved SETTLE_REHELD_PAYOUT decision as its approver, in one
// Postgres transaction with the decision (decide: the approver is a second person, the
// decision waits), the wallet's ledger, the payout's status log and the flag's closing:
//
//   - SUCCESS (settle): the operator did pay. What was held again leaves the wallet (PAYOUT of the
//     paid attempt: pending −= held), and the payout moves FAILED → SUCCESS with an ADMIN status
//     log and its events; what had already been spent before it could be held again stays short
//     (the flag's note and the outcome say how much).
//   - FAILED (release): the payment is not the merchant's to bear (the operator reversed it, or
//     Sika bears it): what was held again returns to available (PAYOUT_REVERSAL of the paid
//     attempt); the payout stays FAILED, with an ADMIN status log saying so.
func (s *Store) SettleReheldPayout(ctx context.Context, decisionID, approver uuid.UUID, approverEmail string) (MoneyDecision, ReheldOutcome, error) {
	var out ReheldOutcome
	d, err := s.decide(ctx, decisionID, approver, DecisionApproved, "", func(tx pgx.Tx, d MoneyDecision) (any, error) {
		if d.Kind != DecisionSettleReheldPayout || d.Flag == nil {
			return nil, fmt.Errorf("settle re-held payout: decision %s is a %s", d.ID, d.Kind)
		}
		t, err := scanTransaction(tx.QueryRow(ctx, `SELECT `+transactionColumns+` FROM transactions t WHERE t.id = $1 FOR UPDATE`, d.Transaction))
		if err != nil {
			return nil, fmt.Errorf("lock payout: %w", err)
		}
		f, err := scanFlag(tx.QueryRow(ctx, `SELECT `+flagColumns+flagFrom+` WHERE f.id = $1 FOR UPDATE OF f`, *d.Flag))
		if err != nil {
			return nil, fmt.Errorf("lock money flag: %w", err)
		}
		if err := CheckFlagOpen(f, FlagPayoutPaidAfterRelease); err != nil {
			return nil, err
		}
		if t.Status != sika.StatusFailed || f.Attempt == nil {
			return nil, sika.Errorf(sika.CodeNotPending, "Payout %s is %s: only a payout recorded FAILED and held again is settled or released this way.", t.Reference, t.Status)
		}
		var held decimal.Decimal
		if err := tx.QueryRow(ctx, `SELECT coalesce(sum(amount), 0) FROM ledger_entries WHERE transaction_id = $1 AND attempt_id = $2 AND type = $3`,
			t.ID, *f.Attempt, sika.LedgerPayoutHold).Scan(&held); err != nil {
			return nil, fmt.Errorf("read what was held again: %w", err)
		}
		out = ReheldOutcome{Flag: f.ID, Status: d.RequestedStatus, Held: sika.NewAmount(held), Settled: sika.NewAmount(decimal.Zero),
			Released: sika.NewAmount(decimal.Zero), Shortfall: sika.NewAmount(decimal.Max(t.DebitedAmount.Sub(held), decimal.Zero)), Transaction: t.ID}
		p := ledgerPosting{Merchant: t.Merchant, Environment: t.Environment, Country: t.Country, Currency: t.Currency,
			Transaction: &t.ID, Attempt: f.Attempt, Again: true, Amount: held}
		var reason, note string
		switch d.RequestedStatus {
		case sika.StatusSuccess:
			p.Type, p.Direction, p.PendingDelta = sika.LedgerPayout, sika.Debit, held.Neg()
			p.Description = holdLabel(t) + " " + t.Reference + " paid after its release: settled by support"
			out.Settled = sika.NewAmount(held)
			reason = fmt.Sprintf("Settled by support (%s, two-person decision %s): the operator paid attempt %s after the hold was released; %s %s held again left the wallet.",
				approverEmail, d.ID, *f.Attempt, sika.FormatAmount(held), t.Currency)
			if out.Shortfall.IsPositive() {
				reason += fmt.Sprintf(" %s %s had already been spent and was not recovered.", sika.FormatAmount(out.Shortfall.Decimal), t.Currency)
			}
		case sika.StatusFailed:
			p.Type, p.Direction, p.AvailableDelta, p.PendingDelta = sika.LedgerPayoutReversal, sika.Credit, held, held.Neg()
			p.Description = holdLabel(t) + " " + t.Reference + " held again: released by support"
			out.Released = sika.NewAmount(held)
			reason = fmt.Sprintf("Released by support (%s, two-person decision %s): the %s %s held again after the operator paid attempt %s returned to the wallet; the payout stays FAILED.",
				approverEmail, d.ID, sika.FormatAmount(held), t.Currency, *f.Attempt)
		default:
			return nil, fmt.Errorf("settle re-held payout: requested status %q", d.RequestedStatus)
		}
		reason += " Reason: " + d.Reason
		if held.IsPositive() {
			if _, err := postLedgerEntry(ctx, tx, p); err != nil {
				return nil, err
			}
		}
		from := t.Status
		if d.RequestedStatus == sika.StatusSuccess {
			if t, err = scanTransaction(tx.QueryRow(ctx, `UPDATE transactions t SET status = 'SUCCESS', failure_code = '', failure_message = '',
					pending_reason = '', updated_at = now(), completed_at = now()
				WHERE t.id = $1 RETURNING `+transactionColumns, t.ID)); err != nil {
				return nil, fmt.Errorf("settle payout: %w", err)
			}
			if err := settleRefund(ctx, tx, t); err != nil {
				return nil, err
			}
		}
		if err := insertStatusLog(ctx, tx, t, &from, t.Status, reason, sika.TriggerAdmin); err != nil {
			return nil, err
		}
		if t.Status != from {
			if err := transactionEvents(ctx, tx, t); err != nil {
				return nil, err
			}
		}
		note = reason
		if _, err := tx.Exec(ctx, `UPDATE money_flags SET resolved_at = now(), resolved_by = $2, resolution_note = $3 WHERE id = $1`,
			f.ID, approver, note); err != nil {
			return nil, fmt.Errorf("close money flag: %w", err)
		}
		return out, nil
	})
	return d, out, err
}
