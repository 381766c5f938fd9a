package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

// stuckTransaction is a PENDING transaction with where to look at its workflow.
type stuckTransaction struct {
	Transaction sika.Transaction `json:"transaction"`
	pendingWork
}

// pendingWork is where support looks at a PENDING transaction's workflow, and how long the
// transaction has waited.
type pendingWork struct {
	WorkflowID  string `json:"workflow_id"`
	WorkflowURL string `json:"workflow_url"`
	PendingFor  string `json:"pending_for"`
}

func (s *Server) pendingWorkOf(t sika.Transaction, now time.Time) pendingWork {
	id := workflows.WorkflowIDOf(t)
	return pendingWork{WorkflowID: id, WorkflowURL: s.workflowURL(id), PendingFor: now.Sub(t.CreatedAt).Round(time.Second).String()}
}

// workflowURL links a workflow in the Temporal UI ("" when no UI is configured).
func (s *Server) workflowURL(id string) string {
	if s.cfg.TemporalUIURL == "" || id == "" {
		return ""
	}
	ns := s.cfg.TemporalNamespace
	if ns == "" {
		ns = "default"
	}
	return s.cfg.TemporalUIURL + "/namespaces/" + url.PathEscape(ns) + "/workflows/" + url.PathEscape(id)
}

// listStuckTransactions shows staff the transactions PENDING for longer than `older_than`
// (a duration, default 10m), oldest first, with their workflow ids and Temporal UI links.
func (s *Server) listStuckTransactions(w http.ResponseWriter, r *http.Request) error {
	return writeStaffQueue(s, w, r, 10*time.Minute, s.store.StuckTransactions, func(t sika.Transaction, now time.Time) stuckTransaction {
		return stuckTransaction{Transaction: t, pendingWork: s.pendingWorkOf(t, now)}
	})
}

// reverification is the answer of an admin re-verify.
type reverification struct {
	Transaction    sika.TransactionDetail `json:"transaction"`
	GatewayStatus  string                 `json:"gateway_status"`
	Disagreement   bool                   `json:"disagreement"`
	WorkflowID     string                 `json:"workflow_id"`
	WorkflowURL    string                 `json:"workflow_url"`
	SentToGateway  bool                   `json:"sent_to_gateway"`
	GatewayMessage string                 `json:"gateway_message"`
}

// reverifyTransaction lets staff re-check any merchant's transaction at its gateway: a final
// answer the record does not show yet is handed to the workflow, which records it.
func (s *Server) reverifyTransaction(w http.ResponseWriter, r *http.Request) error {
	id, err := actionID(r, "Transaction")
	if err != nil {
		return err
	}
	ctx := r.Context()
	t, err := s.store.Transaction(ctx, id)
	if err != nil {
		return err
	}
	rc, err := s.recheckAtGateway(ctx, t)
	if err != nil {
		return err
	}
	d, err := s.store.TransactionDetail(ctx, t.Merchant, t.Environment, t.ID)
	if err != nil {
		return err
	}
	if err := s.recordReverify(ctx, *principalFrom(ctx).Member, t, rc, d); err != nil {
		return err
	}
	wf := workflows.WorkflowIDOf(t)
	writeData(w, http.StatusOK, reverification{Transaction: d, GatewayStatus: string(rc.Gateway.Status), Disagreement: rc.Disagrees,
		WorkflowID: wf, WorkflowURL: s.workflowURL(wf), SentToGateway: rc.Asked, GatewayMessage: rc.Gateway.FailureMessage})
	return nil
}

// listKYCQueue shows staff the dossiers of every merchant in a status (default PENDING), oldest
// first: the review queue.
func (s *Server) listKYCQueue(w http.ResponseWriter, r *http.Request) error {
	return writePage(s, w, r, func(p store.PageRequest) ([]sika.KYCDossier, int, error) {
		status := sika.KYCDossierStatus(r.URL.Query().Get("status"))
		switch status {
		case "":
			status = sika.KYCDossierPending
		case sika.KYCDossierPending, sika.KYCDossierApproved, sika.KYCDossierRejected:
		default:
			return nil, 0, sika.FieldError("status", `Must be "PENDING", "APPROVED" or "REJECTED".`)
		}
		return s.store.KYCDossiersByStatus(r.Context(), status, p)
	})
}

// writeStaffQueue answers a staff queue: the rows list reads, PENDING for longer than
// `older_than` (def when absent), at most `limit`, each as view shows it at this instant.
func writeStaffQueue[T, V any](s *Server, w http.ResponseWriter, r *http.Request, def time.Duration,
	list func(ctx context.Context, olderThan time.Duration, limit int) ([]T, error), view func(row T, now time.Time) V) error {
	olderThan, err := queryOlderThan(r, def)
	if err != nil {
		return err
	}
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	rows, err := list(r.Context(), olderThan, limit)
	if err != nil {
		return err
	}
	out := make([]V, len(rows))
	now := s.cfg.Now()
	for i, row := range rows {
		out[i] = view(row, now)
	}
	writeData(w, http.StatusOK, out)
	return nil
}

// queryOlderThan reads the `older_than` duration of a staff list (def when absent).
func queryOlderThan(r *http.Request, def time.Duration) (time.Duration, error) {
	v := r.URL.Query().Get("older_than")
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, sika.FieldError("older_than", "A duration such as 10m or 2h is required.")
	}
	return d, nil
}

// queryLimit reads the `limit` of a staff list: 100 when absent, at most 500.
func queryLimit(r *http.Request) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return 100, nil
	}
	n, msg := atLeastOne(v)
	if msg != "" {
		return 0, sika.FieldError("limit", msg)
	}
	return min(n, 500), nil
}

// unclearPayout is a payout that awaits its operator's final word, with what the operator said
// about each attempt (last_answer) and where to look at its workflow.
type unclearPayout struct {
	Transaction sika.Transaction          `json:"transaction"`
	Attempts    []sika.TransactionAttempt `json:"attempts"`
	pendingWork
}

// listUnclearPayouts shows staff the payouts PENDING for longer than `older_than` (default 15m)
// whose send was unclear (pending_reason set: their hold stays until the operator answers),
// oldest first, with their attempts and the operator's last answers: support's queue.
func (s *Server) listUnclearPayouts(w http.ResponseWriter, r *http.Request) error {
	return writeStaffQueue(s, w, r, 15*time.Minute, s.store.UnclearPayouts, func(d sika.TransactionDetail, now time.Time) unclearPayout {
		return unclearPayout{Transaction: d.Transaction, Attempts: listOf(d.Attempts), pendingWork: s.pendingWorkOf(d.Transaction, now)}
	})
}

// SupportDecision is what support asks for a payout the operator leaves unclear.
type SupportDecision struct {
	Status sika.TransactionStatus `json:"status"`
	Reason string                 `json:"reason"`
}

// maxResolutionReason bounds the reason of a support resolution (it goes to the status log,
// the merchant's failure_message and the audit trail).
const maxResolutionReason = 500

// Validate checks the decision's values: a status of SUCCESS or FAILED and a reason that is
// not blank and at most 500 characters.
func (d SupportDecision) Validate() error {
	var v sika.Validation
	switch d.Status {
	case "":
		v.Add("status", sika.MsgRequired)
	case sika.StatusFailed, sika.StatusSuccess:
	default:
		v.Add("status", `Must be "FAILED" or "SUCCESS".`)
	}
	switch reason := strings.TrimSpace(d.Reason); {
	case reason == "":
		v.Add("reason", sika.MsgNotBlank)
	case len([]rune(reason)) > maxResolutionReason:
		v.Add("reason", msgTooLong(maxResolutionReason))
	}
	return v.Err()
}

// Who decided a resolved payout (Resolution.DecidedBy).
const (
	DecidedByOperator = "operator"
	DecidedBySupport  = "support"
)

// OperatorUnreachable is the operator answer of a resolution whose status read could not reach
// the gateway.
const OperatorUnreachable = "UNREACHABLE"

// Resolution is the answer to a support resolution: the payout as it now stands and who decided
// it. DecidedBy is "operator" when the status read gave a final answer (support's choice was
// not applied: the operator's answer was recorded instead), "support" when support's choice
// ended the run.
type Resolution struct {
	Transaction     sika.TransactionDetail `json:"transaction"`
	DecidedBy       string                 `json:"decided_by"`
	RequestedStatus sika.TransactionStatus `json:"requested_status"`
	// OperatorAnswer is what the status read said: PENDING, NOT_FOUND, SUCCESS, FAILED, or
	// UNREACHABLE when the gateway could not be asked.
	OperatorAnswer string `json:"operator_answer"`
	WorkflowID     string `json:"workflow_id"`
	WorkflowURL    string `json:"workflow_url"`
}

// applyResolution ends, as support decided, a PENDING payout that its operator leaves
// unclear: the second step of the two-person rule, run when a money approver approves the
// proposal (ApproveMoneyDecision) and only then. The status is read at the gateway first
// (workflows.RecheckAtGateway): a final answer decides, recorded by the payout's workflow, and
// support's choice is not applied (DecidedBy "operator"). Otherwise (PENDING, NOT_FOUND, or the
// gateway unreachable) the decision goes to the workflow (workflows.UpdateSupportResolution),
// which records it with the staff action in one Postgres transaction (status log by ADMIN naming
// the approver; FAILED releases the hold, SUCCESS settles it). Only payouts: a collection ends on
// its own.
func applyResolution(ctx context.Context, c client.Client, st *store.Store, gws *gateway.Router, id uuid.UUID, d SupportDecision, staff sika.Member) (Resolution, error) {
	d.Reason = strings.TrimSpace(d.Reason)
	out := Resolution{RequestedStatus: d.Status}
	if !staff.Can(sika.PermApproveMoneyDecision) {
		return out, sika.ErrStaffRole(sika.PermApproveMoneyDecision)
	}
	t, err := resolvablePayout(ctx, st, id, d)
	if err != nil {
		return out, err
	}
	out.WorkflowID = workflows.WorkflowIDOf(t)
	attempt, err := st.LatestAttempt(ctx, t.ID)
	if sika.ErrorCode(err) == sika.CodeNotFound {
		return out, sika.Errorf(sika.CodeServiceUnavailable, "The payout has not been sent to an operator yet: there is nothing to resolve. Retry shortly.")
	}
	if err != nil {
		return out, err
	}
	if _, err := gws.Gateway(attempt.Gateway); err != nil {
		return out, sika.Errorf(sika.CodeServiceUnavailable, "The payout's status cannot be read here (gateway %s is not configured in this process); nothing was changed.", attempt.Gateway)
	}

	// The status read: the operator's final word, when it gives one, decides.
	rc, err := workflows.RecheckAtGateway(ctx, c, st, gws, t)
	switch {
	case errors.Is(err, workflows.ErrGatewayUnreachable):
		out.OperatorAnswer = OperatorUnreachable
	case err != nil && rc.Asked && rc.Gateway.Status.Final():
		return out, sika.Errorf(sika.CodeServiceUnavailable, "The operator answered %s, which the payout's workflow has not recorded yet; "+
			"support's choice was not applied. Retry shortly.", rc.Gateway.Status)
	case err != nil:
		return out, err
	case !rc.Asked:
		return out, sika.Errorf(sika.CodeServiceUnavailable, "The payout has not been sent to an operator yet: there is nothing to resolve. Retry shortly.")
	default:
		out.OperatorAnswer = string(rc.Gateway.Status)
	}
	if rc.Asked && rc.Gateway.Status.Final() {
		if out.Transaction, err = st.TransactionDetail(ctx, t.Merchant, t.Environment, t.ID); err != nil {
			return out, err
		}
		if out.Transaction.Status == sika.StatusPending {
			return out, sika.Errorf(sika.CodeServiceUnavailable, "The operator answered %s, which the payout's workflow has not recorded yet; "+
				"support's choice was not applied. Retry shortly.", rc.Gateway.Status)
		}
		out.DecidedBy = decidedBy(out.Transaction)
		return out, nil
	}

	// Still unclear: support decides, through the workflow (the only writer of a run's end).
	uctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var result workflows.PaymentResult
	err = workflows.UpdateOperation(uctx, c, t, workflows.UpdateSupportResolution, workflows.SupportResolution{
		Status: d.Status, Reason: d.Reason, Staff: staff.ID, StaffEmail: staff.Email, OperatorAnswer: out.OperatorAnswer,
	}, &result)
	detail, derr := st.TransactionDetail(ctx, t.Merchant, t.Environment, t.ID)
	if derr != nil {
		return out, errors.Join(derr, err)
	}
	out.Transaction = detail
	if detail.Status != sika.StatusPending {
		// Decided: by this resolution, or by the operator meanwhile (its answer was being
		// recorded, or came before the resolution reached the workflow): support's choice was
		// then not applied, and DecidedBy says so. Another resolution that decided otherwise
		// meanwhile is a conflict.
		out.DecidedBy = decidedBy(detail)
		if out.DecidedBy == DecidedBySupport && detail.Status != d.Status {
			return out, sika.Errorf(sika.CodeNotPending, "Payout was resolved %s by another support request meanwhile (see its staff actions); this one was not applied.", detail.Status)
		}
		return out, nil
	}
	var appErr *temporal.ApplicationError
	switch {
	case err == nil:
		err = errors.New("the workflow answered but the payout is still PENDING")
	case errors.As(err, &appErr) && appErr.Type() == workflows.ErrBadResolution:
		return out, sika.FieldError("non_field_errors", appErr.Message())
	}
	return out, sika.Errorf(sika.CodeServiceUnavailable, "The payout's workflow did not take the resolution (%s); nothing was changed. Retry shortly.", err)
}

// resolvablePayout is the transaction a resolution is about, when it can be resolved: a decision
// with a valid status and reason, on a PENDING payout.
func resolvablePayout(ctx context.Context, st *store.Store, id uuid.UUID, d SupportDecision) (sika.Transaction, error) {
	if err := d.Validate(); err != nil {
		return sika.Transaction{}, err
	}
	t, err := st.Transaction(ctx, id)
	if err != nil {
		return t, err
	}
	if t.FlowDirection != sika.DirectionOutbound || workflows.WorkflowIDOf(t) == "" {
		return t, sika.FieldError("non_field_errors", "Only a payout (flow_direction OUTBOUND) can be resolved by support: "+
			"a collection ends on its own (it expires, and a success that comes later is reconciled).")
	}
	if t.Status != sika.StatusPending {
		return t, sika.Errorf(sika.CodeNotPending, "Payout is %s, not PENDING: there is nothing to resolve.", t.Status)
	}
	return t, nil
}

// decidedBy says who ended a payout's run: support when the status log of its end was written
// by ADMIN, the operator otherwise.
func decidedBy(d sika.TransactionDetail) string {
	for _, l := range slices.Backward(d.StatusLogs) {
		if l.FromStatus != nil && *l.FromStatus == sika.StatusPending && l.ToStatus == d.Status {
			if l.TriggeredBy == sika.TriggerAdmin {
				return DecidedBySupport
			}
			return DecidedByOperator
		}
	}
	return DecidedByOperator
}

// resolveTransaction lets a support agent propose the end of an unclear payout with a reason
// (ProposeResolution): 202 with the proposal, which a money approver other than the proposer
// approves (POST /admin/money-decisions/{id}/approve/) or rejects. The body takes `status` and
// `reason` only.
func (s *Server) resolveTransaction(w http.ResponseWriter, r *http.Request) error {
	return s.proposeStatus(w, r, "Transaction", "payout resolution proposed", ProposeResolution)
}

// decodeDecision reads a resolution body: `status` and `reason`, both required; any other
// field is refused.
func decodeDecision(r *http.Request) (SupportDecision, error) {
	var d SupportDecision
	body, err := requestBody(r)
	if err != nil {
		return d, err
	}
	if err := decodeJSONObject(body, &d); err != nil {
		return d, err // a member other than status and reason is refused there (strict input)
	}
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(body, &raw) // decodeJSONObject accepted it as an object (or an empty body)
	var v sika.Validation
	if _, ok := raw["status"]; !ok {
		v.Add("status", sika.MsgRequired)
	}
	if _, ok := raw["reason"]; !ok {
		v.Add("reason", sika.MsgRequired)
	}
	if err := v.Err(); err != nil {
		return d, err
	}
	return d, d.Validate()
}

// listMoneyFlags shows staff the money that needs a person (a refund due, a payout the operator
// paid after its hold was released, or paid twice): the open flags, oldest first; with
// `all=true` the resolved ones too, after the open ones.
func (s *Server) listMoneyFlags(w http.ResponseWriter, r *http.Request) error {
	all := false
	if v := r.URL.Query().Get("all"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return sika.FieldError("all", `Must be "true" or "false".`)
		}
		all = b
	}
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	flags, err := OpenFlagsFirst(r.Context(), s.store, all, limit)
	return reply(w, http.StatusOK, flags, err)
}

// OpenFlagsFirst lists the open money flags, oldest first, then (all) the resolved ones, up to
// limit in all. Used by GET /admin/money-flags/ and `sika admin money-flags`.
func OpenFlagsFirst(ctx context.Context, st *store.Store, all bool, limit int) ([]store.MoneyFlag, error) {
	flags, err := st.MoneyFlags(ctx, false, limit)
	if err != nil || !all || len(flags) >= limit {
		return flags, err
	}
	// The oldest limit+open flags of every kind hold at least limit-open resolved ones (when
	// there are that many): there are only `open` open flags in all.
	every, err := st.MoneyFlags(ctx, true, limit+len(flags))
	if err != nil {
		return nil, err
	}
	for _, f := range every {
		if f.ResolvedAt != nil && len(flags) < limit {
			flags = append(flags, f)
		}
	}
	return flags, nil
}

// listStaffActions shows staff the audit trail of a transaction: who did what, when and why,
// newest first.
func (s *Server) listStaffActions(w http.ResponseWriter, r *http.Request) error {
	id, err := pathUUID(r, "id", "Transaction")
	if err != nil {
		return err
	}
	limit, err := queryLimit(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if _, err := s.store.Transaction(ctx, id); err != nil {
		return err
	}
	actions, err := s.store.StaffActions(ctx, id, limit)
	return reply(w, http.StatusOK, listOf(actions), err)
}
