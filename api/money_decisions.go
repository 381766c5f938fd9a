package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// Money decisions take two people (issue 24): a support agent proposes the resolution of an
// unclear payout (which decides where the money goes), a money approver other than the
// proposer approves it, and only then is it applied (applyResolution); or rejects it. Both
// steps are staff actions. The JSON routes, the console and `sika admin` go through these
// functions and nothing else.

// ProposeResolution records a staff member's proposal to end an unclear payout as d says: the
// member needs the propose role, the payout must be PENDING, and nothing is applied yet.
func ProposeResolution(ctx context.Context, st *store.Store, id uuid.UUID, d SupportDecision, staff sika.Member) (store.MoneyDecision, error) {
	if !staff.Can(sika.PermProposeMoneyDecision) {
		return store.MoneyDecision{}, sika.ErrStaffRole(sika.PermProposeMoneyDecision)
	}
	d.Reason = strings.TrimSpace(d.Reason)
	if _, err := resolvablePayout(ctx, st, id, d); err != nil {
		return store.MoneyDecision{}, err
	}
	return st.ProposeMoneyDecision(ctx, store.Proposal{Kind: store.DecisionResolveUnclearPayout, Transaction: id,
		RequestedStatus: d.Status, Reason: d.Reason, Staff: staff.ID})
}

// checkReason refuses a blank reason (or note, the field) or one over 500 characters.
func checkReason(field, reason string) error {
	switch reason = strings.TrimSpace(reason); {
	case reason == "":
		return sika.FieldError(field, sika.MsgNotBlank)
	case len([]rune(reason)) > maxResolutionReason:
		return sika.FieldError(field, msgTooLong(maxResolutionReason))
	}
	return nil
}

// ProposeFlagRefund records a staff member's proposal to refund the customer of a REFUND_DUE
// flag: amount (nil: the flag's amount) is priced and routed as the refund would be
// (QuoteRefund, answered with the proposal), and nothing is issued until a money approver
// other than the proposer approves it (ApproveMoneyDecision). The flag must be open, without a
// refund in flight.
func (s *Server) ProposeFlagRefund(ctx context.Context, flagID uuid.UUID, amount *string, reason string, staff sika.Member) (store.MoneyDecision, RefundQuote, error) {
	var q RefundQuote
	if !staff.Can(sika.PermProposeMoneyDecision) {
		return store.MoneyDecision{}, q, sika.ErrStaffRole(sika.PermProposeMoneyDecision)
	}
	if err := checkReason("reason", reason); err != nil {
		return store.MoneyDecision{}, q, err
	}
	f, err := s.store.MoneyFlag(ctx, flagID)
	if err != nil {
		return store.MoneyDecision{}, q, err
	}
	if err := store.CheckFlagOpen(f, store.FlagRefundDue); err != nil {
		return store.MoneyDecision{}, q, err
	}
	if err := store.CheckNoRefundInFlight(f); err != nil {
		return store.MoneyDecision{}, q, err
	}
	if amount == nil || strings.TrimSpace(*amount) == "" {
		v := f.Amount.String()
		amount = &v
	}
	q, err = s.QuoteRefund(ctx, f.Merchant, f.Environment, RefundOrder{Transaction: f.Transaction, Amount: amount})
	if err != nil {
		return store.MoneyDecision{}, q, err
	}
	a := q.Fees.RequestedAmount
	d, err := s.store.ProposeMoneyDecision(ctx, store.Proposal{Kind: store.DecisionRefundFlag, Transaction: f.Transaction,
		Reason: reason, Staff: staff.ID, Flag: &f.ID, Amount: &a})
	return d, q, err
}

// ProposeReheldPayout records a staff member's proposal to settle (d.Status SUCCESS: the
// operator did pay, what was held again leaves the wallet) or release (FAILED: it returns to
// the wallet) a payout the operator paid after its hold was released (a
// PAYOUT_PAID_AFTER_RELEASE flag, open). Applied on approval (store.SettleReheldPayout).
func ProposeReheldPayout(ctx context.Context, st *store.Store, flagID uuid.UUID, d SupportDecision, staff sika.Member) (store.MoneyDecision, error) {
	if !staff.Can(sika.PermProposeMoneyDecision) {
		return store.MoneyDecision{}, sika.ErrStaffRole(sika.PermProposeMoneyDecision)
	}
	if err := d.Validate(); err != nil {
		return store.MoneyDecision{}, err
	}
	f, err := st.MoneyFlag(ctx, flagID)
	if err != nil {
		return store.MoneyDecision{}, err
	}
	if err := store.CheckFlagOpen(f, store.FlagPayoutPaidAfterRelease); err != nil {
		return store.MoneyDecision{}, err
	}
	return st.ProposeMoneyDecision(ctx, store.Proposal{Kind: store.DecisionSettleReheldPayout, Transaction: f.Transaction,
		RequestedStatus: d.Status, Reason: d.Reason, Staff: staff.ID, Flag: &f.ID})
}

// Approval is the answer to an approval: the decision as recorded and what applying it did
// (one of resolution, refund, reheld, by the decision's kind).
type Approval struct {
	Decision store.MoneyDecision `json:"decision"`
	// Resolution: the unclear payout as it now stands (RESOLVE_UNCLEAR_PAYOUT).
	Resolution *Resolution `json:"resolution,omitempty"`
	// Refund: the refund issued (REFUND_FLAG); its flag closes when it succeeds.
	Refund *sika.Transaction `json:"refund,omitempty"`
	// Reheld: what was settled or released (SETTLE_REHELD_PAYOUT).
	Reheld *store.ReheldOutcome `json:"reheld,omitempty"`
}

// ApproveMoneyDecision applies a waiting proposal as a second staff member (a money approver
// who did not propose it) and records the approval with what it gave:
//
//   - RESOLVE_UNCLEAR_PAYOUT: applyResolution. When the resolution cannot be applied now (the
//     operator's answer is being recorded, the workflow did not take it), the proposal keeps
//     waiting and the error says so.
//   - REFUND_FLAG: the refund is issued (IssueRefund, with the decision's id for idempotency
//     key: approved twice, it is issued once), then the approval recorded; the flag closes when
//     the refund succeeds.
//   - SETTLE_REHELD_PAYOUT: store.SettleReheldPayout, one Postgres transaction with the
//     approval.
//
// The first two are applied while the proposal's row is locked (store.ApproveMoneyDecision): a
// second approver, or another approver's rejection, that comes meanwhile waits for the approval
// and is answered not_awaiting_approval, so that a rejected proposal is never applied.
func (s *Server) ApproveMoneyDecision(ctx context.Context, id uuid.UUID, approver sika.Member) (Approval, error) {
	if !approver.Can(sika.PermApproveMoneyDecision) {
		return Approval{}, sika.ErrStaffRole(sika.PermApproveMoneyDecision)
	}
	d, err := s.store.MoneyDecision(ctx, id)
	if err != nil {
		return Approval{}, err
	}
	if err := store.CheckDecider(d, approver.ID); err != nil {
		return Approval{Decision: d}, err
	}
	a := Approval{Decision: d}
	var apply func(store.MoneyDecision) (any, error)
	switch d.Kind {
	case store.DecisionResolveUnclearPayout:
		apply = func(d store.MoneyDecision) (any, error) {
			res, err := applyResolution(ctx, s.cfg.Temporal, s.store, s.cfg.Gateways, d.Transaction, SupportDecision{Status: d.RequestedStatus, Reason: d.Reason}, approver)
			res.WorkflowURL = s.workflowURL(res.WorkflowID)
			a.Resolution = &res
			if err != nil {
				return nil, err
			}
			return map[string]any{"status": res.Transaction.Status, "decided_by": res.DecidedBy, "operator_answer": res.OperatorAnswer}, nil
		}
	case store.DecisionRefundFlag:
		apply = func(d store.MoneyDecision) (any, error) {
			t, err := s.issueFlagRefund(ctx, d)
			if err != nil {
				return nil, err
			}
			a.Refund = &t
			return map[string]any{"refund": t.ID, "reference": t.Reference, "status": t.Status, "amount": t.RequestedAmount}, nil
		}
	case store.DecisionSettleReheldPayout:
		decided, out, err := s.store.SettleReheldPayout(ctx, id, approver.ID, approver.Email)
		if sika.ErrorCode(err) == sika.CodeNotAwaitingApproval {
			decided, err = s.store.MoneyDecision(ctx, id) // another approver's, in its own transaction
			a.Decision = decided
			if err == nil {
				err = sika.Errorf(sika.CodeNotAwaitingApproval, "This decision was already %s; nothing was changed.", strings.ToLower(string(decided.Status)))
			}
			return a, err
		}
		if err != nil {
			return a, err
		}
		a.Decision, a.Reheld = decided, &out
		return a, nil
	default:
		return a, fmt.Errorf("approve money decision %s: unknown kind %s", id, d.Kind)
	}
	// Applied under the proposal's lock: a rejection or a second approval meanwhile waits, then
	// finds it decided, and what is recorded is what was applied.
	decided, err := s.store.ApproveMoneyDecision(ctx, id, approver.ID, apply)
	if err != nil {
		return a, err
	}
	a.Decision = decided
	return a, nil
}

// issueFlagRefund issues the refund of an approved REFUND_FLAG decision: the flag's collection,
// the decision's amount, an idempotency key of the decision (a second approval gets the same
// refund), linked to the flag in the refund's own Postgres transaction.
func (s *Server) issueFlagRefund(ctx context.Context, d store.MoneyDecision) (sika.Transaction, error) {
	if d.Flag == nil || d.Amount == nil {
		return sika.Transaction{}, fmt.Errorf("refund decision %s without its flag or amount", d.ID)
	}
	f, err := s.store.MoneyFlag(ctx, *d.Flag)
	if err != nil {
		return sika.Transaction{}, err
	}
	amount := d.Amount.String()
	t, _, err := s.IssueRefund(ctx, f.Merchant, f.Environment, RefundOrder{Transaction: f.Transaction, Amount: &amount,
		Reason: d.Reason, IdempotencyKey: "money-decision:" + d.ID.String(), Flag: &f.ID})
	return t, err
}

// RejectMoneyDecision closes a waiting proposal without applying it, as a money approver who did
// not propose it, with a note (required).
func RejectMoneyDecision(ctx context.Context, st *store.Store, id uuid.UUID, staff sika.Member, note string) (store.MoneyDecision, error) {
	if !staff.Can(sika.PermApproveMoneyDecision) {
		return store.MoneyDecision{}, sika.ErrStaffRole(sika.PermApproveMoneyDecision)
	}
	note = strings.TrimSpace(note)
	if err := checkReason("note", note); err != nil {
		return store.MoneyDecision{}, err
	}
	return st.DecideMoneyDecision(ctx, id, staff.ID, store.DecisionRejected, note, nil)
}

// listMoneyDecisions shows staff the money decisions, newest first: `status` PENDING (default),
// APPROVED, REJECTED or ALL.
func (s *Server) listMoneyDecisions(w http.ResponseWriter, r *http.Request) error {
	status := store.DecisionStatus(strings.ToUpper(r.URL.Query().Get("status")))
	switch status {
	case "":
		status = store.DecisionPending
	case store.DecisionPending, store.DecisionApproved, store.DecisionRejected:
	case "ALL":
		status = ""
	default:
		return sika.FieldError("status", `Must be "PENDING", "APPROVED", "REJECTED" or "ALL".`)
	}
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	out, err := s.store.MoneyDecisions(r.Context(), status, uuid.Nil, limit)
	return reply(w, http.StatusOK, listOf(out), err)
}

// approveMoneyDecision applies a waiting proposal (ApproveMoneyDecision); no body.
func (s *Server) approveMoneyDecision(w http.ResponseWriter, r *http.Request) error {
	id, err := actionID(r, "Money decision")
	if err != nil {
		return err
	}
	ctx := r.Context()
	staff := principalFrom(ctx).Member
	a, err := s.ApproveMoneyDecision(ctx, id, *staff)
	if err != nil {
		return err
	}
	log := logFrom(ctx).With("decision", id, "kind", a.Decision.Kind, "transaction", a.Decision.Transaction, "staff", staff.ID)
	switch {
	case a.Resolution != nil:
		log.Warn("payout resolution approved", "operator_answer", a.Resolution.OperatorAnswer, "decided_by", a.Resolution.DecidedBy,
			"status", a.Resolution.Transaction.Status)
	case a.Refund != nil:
		log.Warn("flag refund approved and issued", "refund", a.Refund.ID, "amount", a.Refund.RequestedAmount)
	case a.Reheld != nil:
		log.Warn("re-held payout decided", "status", a.Reheld.Status, "settled", a.Reheld.Settled, "released", a.Reheld.Released)
	}
	writeData(w, http.StatusOK, a)
	return nil
}

// rejectionRequest is the body of a rejection.
type rejectionRequest struct {
	Note string `json:"note"`
}

// rejectMoneyDecision closes a waiting proposal with a note (RejectMoneyDecision).
func (s *Server) rejectMoneyDecision(w http.ResponseWriter, r *http.Request) error {
	var req rejectionRequest
	id, err := idAndBody(r, "Money decision", &req)
	if err != nil {
		return err
	}
	ctx := r.Context()
	staff := principalFrom(ctx).Member
	d, err := RejectMoneyDecision(ctx, s.store, id, *staff, req.Note)
	if err != nil {
		return err
	}
	logFrom(ctx).Warn("payout resolution rejected", "decision", id, "transaction", d.Transaction, "staff", staff.ID)
	writeData(w, http.StatusOK, d)
	return nil
}

// requireStaff wraps a staff route's handler with the check of the member's role: the route's
// access already admits only staff; p is what the role must allow.
func requireStaff(p sika.StaffPermission, h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		pr := principalFrom(r.Context())
		if pr == nil || pr.Member == nil {
			return errors.New("staff route without a member principal")
		}
		if !pr.Member.Can(p) {
			return sika.ErrStaffRole(p)
		}
		return h(w, r)
	}
}

// RefundQuoteView is a refund's price as a proposal shows it (QuoteRefund).
type RefundQuoteView struct {
	// Amount is what the customer gets back; Fee the refund's fee, charged on top; Debited what
	// leaves the merchant's wallet (Amount + Fee).
	Amount   sika.Amount     `json:"amount"`
	Fee      sika.Amount     `json:"fee"`
	Debited  sika.Amount     `json:"debited_amount"`
	Currency string          `json:"currency"`
	Via      store.RefundVia `json:"via"`
	// Left is what remains to refund of the collection before this refund.
	Left sika.Amount `json:"left_to_refund"`
}

// View is the quote as a proposal answers it.
func (q RefundQuote) View() RefundQuoteView {
	return RefundQuoteView{Amount: sika.NewAmount(q.Fees.RequestedAmount), Fee: sika.NewAmount(q.Fees.ClientFee),
		Debited: sika.NewAmount(q.Fees.DebitedAmount), Currency: q.Collection.Currency, Via: q.Via, Left: sika.NewAmount(q.Left)}
}

// FlagRefundProposal is the answer to a proposed flag refund: the decision waiting for a second
// person and what the refund would do.
type FlagRefundProposal struct {
	Decision store.MoneyDecision `json:"decision"`
	Quote    RefundQuoteView     `json:"quote"`
}

type flagRefundRequest struct {
	Amount *string `json:"amount"`
	Reason *string `json:"reason"`
}

// proposeFlagRefund lets a support agent propose the refund of a REFUND_DUE flag
// (ProposeFlagRefund): 202 with the proposal and its quote; a money approver other than the
// proposer issues it by approving (POST /admin/money-decisions/{id}/approve/).
func (s *Server) proposeFlagRefund(w http.ResponseWriter, r *http.Request) error {
	var req flagRefundRequest
	id, err := idAndBody(r, "Money flag", &req)
	if err != nil {
		return err
	}
	if req.Reason == nil {
		return sika.FieldError("reason", sika.MsgRequired)
	}
	if req.Amount != nil && strings.TrimSpace(*req.Amount) == "" {
		return sika.FieldError("amount", sika.MsgNotBlank)
	}
	ctx := r.Context()
	staff := principalFrom(ctx).Member
	d, q, err := s.ProposeFlagRefund(ctx, id, req.Amount, *req.Reason, *staff)
	if err != nil {
		return err
	}
	logFrom(ctx).Warn("flag refund proposed", "flag", id, "transaction", d.Transaction, "staff", staff.ID, "decision", d.ID)
	writeData(w, http.StatusAccepted, FlagRefundProposal{Decision: d, Quote: q.View()})
	return nil
}

// proposeReheldPayout lets a support agent propose to settle (status SUCCESS) or release
// (FAILED) a payout held again after its operator paid it past its release
// (ProposeReheldPayout): 202 with the proposal. Body: `status` and `reason`.
func (s *Server) proposeReheldPayout(w http.ResponseWriter, r *http.Request) error {
	return s.proposeStatus(w, r, "Money flag", "re-held payout decision proposed", ProposeReheldPayout)
}

// proposeStatus serves a proposal that asks a transaction to end SUCCESS or FAILED (body
// `status` and `reason`, decodeDecision) about the object of the path's id: 202 with the
// proposal, logged as what.
func (s *Server) proposeStatus(w http.ResponseWriter, r *http.Request, object, what string,
	propose func(context.Context, *store.Store, uuid.UUID, SupportDecision, sika.Member) (store.MoneyDecision, error)) error {
	id, err := pathUUID(r, "id", object)
	if err != nil {
		return err
	}
	d, err := decodeDecision(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	staff := principalFrom(ctx).Member
	proposal, err := propose(ctx, s.store, id, d, *staff)
	if err != nil {
		return err
	}
	logFrom(ctx).Warn(what, "id", id, "transaction", proposal.Transaction, "staff", staff.ID, "requested", d.Status, "decision", proposal.ID)
	writeData(w, http.StatusAccepted, proposal)
	return nil
}
