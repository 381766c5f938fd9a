package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
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
	return st.ProposeMoneyDecision(ctx, store.DecisionResolveUnclearPayout, id, d.Status, d.Reason, staff.ID)
}

// Approval is the answer to an approval: the decision as recorded and the resolution applied.
type Approval struct {
	Decision   store.MoneyDecision `json:"decision"`
	Resolution Resolution          `json:"resolution"`
}

// ApproveMoneyDecision applies a waiting proposal as a second staff member (a money approver
// who did not propose it) and records the approval with what it gave. When the resolution
// cannot be applied now (the operator's answer is being recorded, the workflow did not take
// it), the proposal keeps waiting and the error says so. Two approvers at once: the payout's
// workflow applies one resolution; the second finds the decision already approved.
func ApproveMoneyDecision(ctx context.Context, c client.Client, st *store.Store, gws *gateway.Router, id uuid.UUID, approver sika.Member) (Approval, error) {
	if !approver.Can(sika.PermApproveMoneyDecision) {
		return Approval{}, sika.ErrStaffRole(sika.PermApproveMoneyDecision)
	}
	d, err := st.MoneyDecision(ctx, id)
	if err != nil {
		return Approval{}, err
	}
	if err := store.CheckDecider(d, approver.ID); err != nil {
		return Approval{Decision: d}, err
	}
	res, err := applyResolution(ctx, c, st, gws, d.Transaction, SupportDecision{Status: d.RequestedStatus, Reason: d.Reason}, approver)
	if err != nil {
		return Approval{Decision: d, Resolution: res}, err
	}
	outcome := map[string]any{"status": res.Transaction.Status, "decided_by": res.DecidedBy, "operator_answer": res.OperatorAnswer}
	decided, err := st.DecideMoneyDecision(ctx, id, approver.ID, store.DecisionApproved, "", outcome)
	if sika.ErrorCode(err) == sika.CodeNotAwaitingApproval {
		// Another approver's approval was recorded meanwhile; the workflow applied one resolution.
		decided, err = st.MoneyDecision(ctx, id)
	}
	return Approval{Decision: decided, Resolution: res}, err
}

// RejectMoneyDecision closes a waiting proposal without applying it, as a money approver who did
// not propose it, with a note (required).
func RejectMoneyDecision(ctx context.Context, st *store.Store, id uuid.UUID, staff sika.Member, note string) (store.MoneyDecision, error) {
	if !staff.Can(sika.PermApproveMoneyDecision) {
		return store.MoneyDecision{}, sika.ErrStaffRole(sika.PermApproveMoneyDecision)
	}
	note = strings.TrimSpace(note)
	switch {
	case note == "":
		return store.MoneyDecision{}, sika.FieldError("note", sika.MsgNotBlank)
	case len([]rune(note)) > maxResolutionReason:
		return store.MoneyDecision{}, sika.FieldError("note", "Ensure this field has no more than 500 characters.")
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
	if err != nil {
		return err
	}
	if out == nil {
		out = []store.MoneyDecision{}
	}
	writeData(w, http.StatusOK, out)
	return nil
}

// approveMoneyDecision applies a waiting proposal (ApproveMoneyDecision); no body.
func (s *Server) approveMoneyDecision(w http.ResponseWriter, r *http.Request) error {
	if err := noBody(r); err != nil {
		return err
	}
	id, err := pathUUID(r, "id", "Money decision")
	if err != nil {
		return err
	}
	ctx := r.Context()
	staff := principalFrom(ctx).Member
	a, err := ApproveMoneyDecision(ctx, s.cfg.Temporal, s.store, s.cfg.Gateways, id, *staff)
	if err != nil {
		return err
	}
	a.Resolution.WorkflowURL = s.workflowURL(a.Resolution.WorkflowID)
	logFrom(ctx).Warn("payout resolution approved", "decision", id, "transaction", a.Decision.Transaction, "staff", staff.ID,
		"operator_answer", a.Resolution.OperatorAnswer, "decided_by", a.Resolution.DecidedBy, "status", a.Resolution.Transaction.Status)
	writeData(w, http.StatusOK, a)
	return nil
}

// rejectionRequest is the body of a rejection.
type rejectionRequest struct {
	Note string `json:"note"`
}

// rejectMoneyDecision closes a waiting proposal with a note (RejectMoneyDecision).
func (s *Server) rejectMoneyDecision(w http.ResponseWriter, r *http.Request) error {
	id, err := pathUUID(r, "id", "Money decision")
	if err != nil {
		return err
	}
	body, ok := bodyFrom(r.Context())
	if !ok {
		if body, err = readBody(r, maxJSONBody); err != nil {
			return err
		}
	}
	var req rejectionRequest
	if err := decodeJSONObject(body, &req); err != nil {
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
