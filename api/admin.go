package api

import (
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/workflows"
)

// stuckTransaction is a PENDING transaction with where to look at its workflow.
type stuckTransaction struct {
	Transaction sika.Transaction `json:"transaction"`
	WorkflowID  string           `json:"workflow_id"`
	WorkflowURL string           `json:"workflow_url"`
	PendingFor  string           `json:"pending_for"`
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
	olderThan := 10 * time.Minute
	if v := r.URL.Query().Get("older_than"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return sika.FieldError("older_than", "A duration such as 10m or 2h is required.")
		}
		olderThan = d
	}
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return sika.FieldError("limit", sika.MsgPositiveInt)
		}
		limit = min(n, 500)
	}
	txs, err := s.store.StuckTransactions(r.Context(), olderThan, limit)
	if err != nil {
		return err
	}
	out := make([]stuckTransaction, len(txs))
	now := s.cfg.Now()
	for i, t := range txs {
		id := workflows.WorkflowIDOf(t)
		out[i] = stuckTransaction{Transaction: t, WorkflowID: id, WorkflowURL: s.workflowURL(id),
			PendingFor: now.Sub(t.CreatedAt).Round(time.Second).String()}
	}
	writeData(w, http.StatusOK, out)
	return nil
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
	id, err := pathUUID(r, "id", "Transaction")
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
	wf := workflows.WorkflowIDOf(t)
	logFrom(ctx).Info("transaction re-verified by staff", "transaction", t.ID, "staff", principalFrom(ctx).Member.ID,
		"gateway_status", rc.Gateway.Status, "record", d.Status)
	writeData(w, http.StatusOK, reverification{Transaction: d, GatewayStatus: string(rc.Gateway.Status), Disagreement: rc.Disagrees,
		WorkflowID: wf, WorkflowURL: s.workflowURL(wf), SentToGateway: rc.Asked, GatewayMessage: rc.Gateway.FailureMessage})
	return nil
}

// listKYCQueue shows staff the dossiers of every merchant in a status (default PENDING), oldest
// first: the review queue.
func (s *Server) listKYCQueue(w http.ResponseWriter, r *http.Request) error {
	p, err := parsePage(r)
	if err != nil {
		return err
	}
	status := sika.KYCDossierStatus(r.URL.Query().Get("status"))
	switch status {
	case "":
		status = sika.KYCDossierPending
	case sika.KYCDossierPending, sika.KYCDossierApproved, sika.KYCDossierRejected:
	default:
		return sika.FieldError("status", `Must be "PENDING", "APPROVED" or "REJECTED".`)
	}
	items, count, err := s.store.KYCDossiersByStatus(r.Context(), status, p)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, s.newPage(r, p, count, items))
	return nil
}
