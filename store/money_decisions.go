package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// DecisionKind is what a money decision decides (money_decisions.kind).
type DecisionKind string

// The kinds of money decision.
const (
	// DecisionResolveUnclearPayout ends a payout its operator leaves unclear
	// (api.ProposeResolution).
	DecisionResolveUnclearPayout DecisionKind = "RESOLVE_UNCLEAR_PAYOUT"
	// DecisionRefundFlag refunds the customer of a REFUND_DUE flag (api.Server.ProposeFlagRefund):
	// approved, it issues the refund; the flag closes when that refund succeeds.
	DecisionRefundFlag DecisionKind = "REFUND_FLAG"
	// DecisionSettleReheldPayout settles (SUCCESS: the operator did pay) or releases (FAILED)
	// what was held again of a payout the operator paid after its hold was released
	// (PAYOUT_PAID_AFTER_RELEASE; api.ProposeReheldPayout, store.SettleReheldPayout).
	DecisionSettleReheldPayout DecisionKind = "SETTLE_REHELD_PAYOUT"
)

// DecisionStatus is where a money decision stands (money_decisions.status).
type DecisionStatus string

// Money decision statuses.
const (
	DecisionPending  DecisionStatus = "PENDING"
	DecisionApproved DecisionStatus = "APPROVED"
	DecisionRejected DecisionStatus = "REJECTED"
)

// Staff actions of the two-person rule (staff_actions.action).
const (
	ActionDecisionProposed = "money_decision_proposed"
	ActionDecisionApproved = "money_decision_approved"
	ActionDecisionRejected = "money_decision_rejected"
)

// MoneyDecision is a decision on money that takes two staff members: one proposes it, another
// approves (and it is applied) or rejects it.
type MoneyDecision struct {
	ID          uuid.UUID    `json:"id"`
	Kind        DecisionKind `json:"kind"`
	Transaction uuid.UUID    `json:"transaction"`
	// RequestedStatus is what the transaction is to end as (FAILED or SUCCESS); "" for a refund.
	RequestedStatus sika.TransactionStatus `json:"requested_status"`
	// Flag is the money flag the decision is about (REFUND_FLAG, SETTLE_REHELD_PAYOUT).
	Flag *uuid.UUID `json:"flag"`
	// Amount is, for a refund, what the customer is to get back (the collection's currency).
	Amount          *sika.Amount   `json:"amount"`
	Reason          string         `json:"reason"`
	ProposedBy      uuid.UUID      `json:"proposed_by"`
	ProposedByEmail string         `json:"proposed_by_email"`
	ProposedAt      time.Time      `json:"proposed_at"`
	Status          DecisionStatus `json:"status"`
	DecidedBy       *uuid.UUID     `json:"decided_by"`
	DecidedByEmail  *string        `json:"decided_by_email"`
	DecidedAt       *time.Time     `json:"decided_at"`
	DecisionNote    string         `json:"decision_note"`
	// Outcome is what applying an approved decision gave (the payout's status, who decided it).
	Outcome json.RawMessage `json:"outcome"`
	// Subject is the transaction as it stands now, for the approver's page (not in the API's
	// answer, which names the transaction by id).
	Subject DecisionSubject `json:"-"`
}

// DecisionSubject is what an approver reads of a decision's transaction before approving it.
type DecisionSubject struct {
	Reference    string
	Type         sika.TransactionType
	Status       sika.TransactionStatus
	Amount       sika.Amount // debited
	Currency     string
	MerchantName string
}

const decisionColumns = `d.id, d.kind, d.transaction_id, d.requested_status, d.reason, d.proposed_by, p.email, d.proposed_at,
	d.status, d.decided_by, a.email, d.decided_at, d.decision_note, coalesce(d.outcome, 'null'::jsonb), d.flag_id, d.amount,
	st.reference, st.transaction_type, st.status, st.debited_amount, st.currency, sm.name`

const decisionFrom = ` FROM money_decisions d JOIN members p ON p.id = d.proposed_by LEFT JOIN members a ON a.id = d.decided_by
	JOIN transactions st ON st.id = d.transaction_id JOIN merchants sm ON sm.id = st.merchant_id`

func scanDecision(row pgx.Row) (MoneyDecision, error) {
	var d MoneyDecision
	var amount *decimal.Decimal
	var debited decimal.Decimal
	err := row.Scan(&d.ID, &d.Kind, &d.Transaction, &d.RequestedStatus, &d.Reason, &d.ProposedBy, &d.ProposedByEmail, &d.ProposedAt,
		&d.Status, &d.DecidedBy, &d.DecidedByEmail, &d.DecidedAt, &d.DecisionNote, &d.Outcome, &d.Flag, &amount,
		&d.Subject.Reference, &d.Subject.Type, &d.Subject.Status, &debited, &d.Subject.Currency, &d.Subject.MerchantName)
	d.Subject.Amount = sika.NewAmount(debited)
	if amount != nil {
		a := sika.NewAmount(*amount)
		d.Amount = &a
	}
	return d, err
}

// Proposal is a money decision proposed by a staff member.
type Proposal struct {
	Kind        DecisionKind
	Transaction uuid.UUID
	// RequestedStatus: FAILED or SUCCESS; "" for a refund.
	RequestedStatus sika.TransactionStatus
	Reason          string
	Staff           uuid.UUID
	// Flag and Amount: see MoneyDecision.
	Flag   *uuid.UUID
	Amount *decimal.Decimal
}

// ProposeMoneyDecision records a staff member's proposal, with its staff action, in one Postgres
// transaction. A transaction has at most one proposal waiting: a second is a validation error
// (non_field_errors) until the first is decided.
func (s *Store) ProposeMoneyDecision(ctx context.Context, p Proposal) (MoneyDecision, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return MoneyDecision{}, err
	}
	reason := strings.TrimSpace(p.Reason)
	err = s.InTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO money_decisions (id, kind, transaction_id, requested_status, reason, proposed_by, flag_id, amount)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, id, p.Kind, p.Transaction, p.RequestedStatus, reason, p.Staff, p.Flag, p.Amount)
		if isUniqueViolation(err, "money_decisions_one_open_idx") {
			return sika.FieldError("non_field_errors", "A decision on this transaction already waits for approval: approve or reject it first.")
		}
		if err != nil {
			return fmt.Errorf("insert money decision: %w", err)
		}
		detail := map[string]any{"decision": id, "kind": p.Kind, "requested_status": p.RequestedStatus}
		if p.Flag != nil {
			detail["flag"] = *p.Flag
		}
		if p.Amount != nil {
			detail["amount"] = sika.FormatAmount(*p.Amount)
		}
		return recordStaffAction(ctx, tx, StaffAction{Staff: p.Staff, Action: ActionDecisionProposed, Transaction: &p.Transaction, Reason: reason,
			Detail: detail})
	})
	if err != nil {
		return MoneyDecision{}, err
	}
	return s.MoneyDecision(ctx, id)
}

// MoneyDecision returns a decision, or not_found.
func (s *Store) MoneyDecision(ctx context.Context, id uuid.UUID) (MoneyDecision, error) {
	return one(s.pool.QueryRow(ctx, `SELECT `+decisionColumns+decisionFrom+` WHERE d.id = $1`, id), scanDecision, "Money decision", "select money decision")
}

// MoneyDecisions lists the decisions of a status ("" for every status), newest first; with a
// transaction (not uuid.Nil), only that transaction's.
func (s *Store) MoneyDecisions(ctx context.Context, status DecisionStatus, transaction uuid.UUID, limit int) ([]MoneyDecision, error) {
	return collect(ctx, s.pool, "money decisions", scanDecision, `SELECT `+decisionColumns+decisionFrom+`
		WHERE ($1 = '' OR d.status = $1) AND ($2 = '00000000-0000-0000-0000-000000000000'::uuid OR d.transaction_id = $2)
		ORDER BY d.proposed_at DESC, d.id DESC LIMIT $3`, status, transaction, limit)
}

// CheckDecider refuses a decision that no longer waits (not_awaiting_approval) and a decider
// who proposed it (self_approval_forbidden): the checks made before a decision is applied.
func CheckDecider(d MoneyDecision, decider uuid.UUID) error {
	if d.Status != DecisionPending {
		return sika.Errorf(sika.CodeNotAwaitingApproval, "This decision was already %s; nothing was changed.", strings.ToLower(string(d.Status)))
	}
	if d.ProposedBy == decider {
		return sika.Errorf(sika.CodeSelfApprovalForbidden, "A money decision needs a second person: another staff member must approve what you proposed.")
	}
	return nil
}

// DecideMoneyDecision records the decision of a second staff member on a waiting proposal
// (APPROVED with what applying it gave, or REJECTED with a note), with its staff action, in one
// Postgres transaction under the proposal's row lock: a proposal is decided once, never by the
// one who proposed it (CheckDecider).
func (s *Store) DecideMoneyDecision(ctx context.Context, id, decider uuid.UUID, status DecisionStatus, note string, outcome any) (MoneyDecision, error) {
	return s.decide(ctx, id, decider, status, note, func(pgx.Tx, MoneyDecision) (any, error) { return outcome, nil })
}

// ApproveMoneyDecision records a second staff member's approval of a waiting proposal with what
// applying it gave (apply's answer), apply running while the proposal's row is locked: a
// rejection or another approval that comes meanwhile waits for it, then finds the proposal
// decided (not_awaiting_approval), so that what is recorded is what was applied. apply works
// outside this Postgres transaction (a status read at the operator, the payout's workflow, a
// refund's own transaction) and must not lock the proposal itself; when it fails, nothing is
// recorded and the proposal keeps waiting.
func (s *Store) ApproveMoneyDecision(ctx context.Context, id, approver uuid.UUID, apply func(MoneyDecision) (any, error)) (MoneyDecision, error) {
	return s.decide(ctx, id, approver, DecisionApproved, "", func(_ pgx.Tx, d MoneyDecision) (any, error) { return apply(d) })
}

// decide locks a waiting decision, checks its decider (CheckDecider), runs apply (which changes
// what the decision decides and answers its outcome) and records the decision with its staff
// action, all in one Postgres transaction.
func (s *Store) decide(ctx context.Context, id, decider uuid.UUID, status DecisionStatus, note string, apply func(pgx.Tx, MoneyDecision) (any, error)) (MoneyDecision, error) {
	if status != DecisionApproved && status != DecisionRejected {
		return MoneyDecision{}, fmt.Errorf("decide money decision: status %q", status)
	}
	note = strings.TrimSpace(note)
	err := s.InTx(ctx, func(tx pgx.Tx) error {
		d, err := one(tx.QueryRow(ctx, `SELECT `+decisionColumns+decisionFrom+` WHERE d.id = $1 FOR UPDATE OF d`, id), scanDecision, "Money decision", "lock money decision")
		if err != nil {
			return err
		}
		if err := CheckDecider(d, decider); err != nil {
			return err
		}
		outcome, err := apply(tx, d)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(outcome)
		if err != nil {
			return fmt.Errorf("encode decision outcome: %w", err)
		}
		if _, err := tx.Exec(ctx, `UPDATE money_decisions SET status = $2, decided_by = $3, decided_at = now(), decision_note = $4, outcome = $5
			WHERE id = $1`, id, status, decider, note, raw); err != nil {
			return fmt.Errorf("update money decision: %w", err)
		}
		if d.Kind == DecisionRefundFlag && status == DecisionApproved {
			// The refund may have succeeded before its approval was recorded: its flag then
			// closed without the approver's name.
			if _, err := tx.Exec(ctx, `UPDATE money_flags SET resolved_by = $2 WHERE id = $1 AND resolved_at IS NOT NULL AND resolved_by IS NULL`,
				d.Flag, decider); err != nil {
				return fmt.Errorf("name the flag's approver: %w", err)
			}
		}
		action, reason := ActionDecisionApproved, d.Reason
		if status == DecisionRejected {
			action, reason = ActionDecisionRejected, note
		}
		return recordStaffAction(ctx, tx, StaffAction{Staff: decider, Action: action, Transaction: &d.Transaction, Reason: reason,
			Detail: map[string]any{"decision": id, "kind": d.Kind, "requested_status": d.RequestedStatus, "proposed_by": d.ProposedBy, "outcome": json.RawMessage(raw)}})
	})
	if err != nil {
		return MoneyDecision{}, err
	}
	return s.MoneyDecision(ctx, id)
}
