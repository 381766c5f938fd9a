package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/sikahq/sika"
)

// DecisionKind is what a money decision decides (money_decisions.kind).
type DecisionKind string

// DecisionResolveUnclearPayout is the kind of money decision that ends a payout its operator
// leaves unclear (api.ProposeResolution).
const DecisionResolveUnclearPayout DecisionKind = "RESOLVE_UNCLEAR_PAYOUT"

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
	ID              uuid.UUID              `json:"id"`
	Kind            DecisionKind           `json:"kind"`
	Transaction     uuid.UUID              `json:"transaction"`
	RequestedStatus sika.TransactionStatus `json:"requested_status"`
	Reason          string                 `json:"reason"`
	ProposedBy      uuid.UUID              `json:"proposed_by"`
	ProposedByEmail string                 `json:"proposed_by_email"`
	ProposedAt      time.Time              `json:"proposed_at"`
	Status          DecisionStatus         `json:"status"`
	DecidedBy       *uuid.UUID             `json:"decided_by"`
	DecidedByEmail  *string                `json:"decided_by_email"`
	DecidedAt       *time.Time             `json:"decided_at"`
	DecisionNote    string                 `json:"decision_note"`
	// Outcome is what applying an approved decision gave (the payout's status, who decided it).
	Outcome json.RawMessage `json:"outcome"`
}

const decisionColumns = `d.id, d.kind, d.transaction_id, d.requested_status, d.reason, d.proposed_by, p.email, d.proposed_at,
	d.status, d.decided_by, a.email, d.decided_at, d.decision_note, coalesce(d.outcome, 'null'::jsonb)`

const decisionFrom = ` FROM money_decisions d JOIN members p ON p.id = d.proposed_by LEFT JOIN members a ON a.id = d.decided_by`

func scanDecision(row pgx.Row) (MoneyDecision, error) {
	var d MoneyDecision
	err := row.Scan(&d.ID, &d.Kind, &d.Transaction, &d.RequestedStatus, &d.Reason, &d.ProposedBy, &d.ProposedByEmail, &d.ProposedAt,
		&d.Status, &d.DecidedBy, &d.DecidedByEmail, &d.DecidedAt, &d.DecisionNote, &d.Outcome)
	return d, err
}

// ProposeMoneyDecision records a staff member's proposal, with its staff action, in one Postgres
// transaction. A transaction has at most one proposal waiting: a second is a validation error
// (non_field_errors) until the first is decided.
func (s *Store) ProposeMoneyDecision(ctx context.Context, kind DecisionKind, transaction uuid.UUID, status sika.TransactionStatus, reason string, staff uuid.UUID) (MoneyDecision, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return MoneyDecision{}, err
	}
	reason = strings.TrimSpace(reason)
	err = s.InTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO money_decisions (id, kind, transaction_id, requested_status, reason, proposed_by)
			VALUES ($1, $2, $3, $4, $5, $6)`, id, kind, transaction, status, reason, staff)
		if isUniqueViolation(err, "money_decisions_one_open_idx") {
			return sika.FieldError("non_field_errors", "A decision on this transaction already waits for approval: approve or reject it first.")
		}
		if err != nil {
			return fmt.Errorf("insert money decision: %w", err)
		}
		return recordStaffAction(ctx, tx, StaffAction{Staff: staff, Action: ActionDecisionProposed, Transaction: &transaction, Reason: reason,
			Detail: map[string]any{"decision": id, "kind": kind, "requested_status": status}})
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
	rows, err := s.pool.Query(ctx, `SELECT `+decisionColumns+decisionFrom+`
		WHERE ($1 = '' OR d.status = $1) AND ($2 = '00000000-0000-0000-0000-000000000000'::uuid OR d.transaction_id = $2)
		ORDER BY d.proposed_at DESC, d.id DESC LIMIT $3`, status, transaction, limit)
	if err != nil {
		return nil, fmt.Errorf("list money decisions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (MoneyDecision, error) { return scanDecision(r) })
	if err != nil {
		return nil, fmt.Errorf("scan money decisions: %w", err)
	}
	return out, nil
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
	if status != DecisionApproved && status != DecisionRejected {
		return MoneyDecision{}, fmt.Errorf("decide money decision: status %q", status)
	}
	raw, err := json.Marshal(outcome)
	if err != nil {
		return MoneyDecision{}, fmt.Errorf("encode decision outcome: %w", err)
	}
	note = strings.TrimSpace(note)
	err = s.InTx(ctx, func(tx pgx.Tx) error {
		d, err := scanDecision(tx.QueryRow(ctx, `SELECT `+decisionColumns+decisionFrom+` WHERE d.id = $1 FOR UPDATE OF d`, id))
		if isNoRows(err) {
			return sika.NotFound("Money decision")
		}
		if err != nil {
			return fmt.Errorf("lock money decision: %w", err)
		}
		if err := CheckDecider(d, decider); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE money_decisions SET status = $2, decided_by = $3, decided_at = now(), decision_note = $4, outcome = $5
			WHERE id = $1`, id, status, decider, note, raw); err != nil {
			return fmt.Errorf("update money decision: %w", err)
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
