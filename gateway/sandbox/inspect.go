package sandbox

import (
	"net/http"
	"time"

	"github.com/sikahq/sika/gateway"
)

// OperationView is an operation as tests and chaos harnesses inspect it
// (GET /sandbox/operations and /sandbox/operations/{reference}).
type OperationView struct {
	Gateway          string               `json:"gateway"`
	Kind             gateway.CallbackKind `json:"kind"` // collection or disbursement
	Reference        string               `json:"reference"`
	GatewayReference string               `json:"gateway_reference"`
	Status           gateway.Status       `json:"status"`
	FailureCode      string               `json:"failure_code"`
	Amount           string               `json:"amount"`
	Currency         string               `json:"currency"`
	Network          string               `json:"network"`
	// Requests counts the initiation calls received for the reference; Pushes the pushes (or
	// transfers) actually started, which must stay 1 however many requests came.
	Requests int `json:"requests"`
	Pushes   int `json:"pushes"`
	// CallbacksSent counts deliveries the receiver acknowledged; CallbackAttempts every try.
	CallbacksSent    int       `json:"callbacks_sent"`
	CallbackAttempts int       `json:"callback_attempts"`
	CreatedAt        time.Time `json:"created_at"`
}

func (op *operation) view() OperationView {
	return OperationView{
		Gateway:          op.gateway.Name,
		Kind:             op.kind,
		Reference:        op.reference,
		GatewayReference: op.gatewayRef,
		Status:           op.status,
		FailureCode:      op.failureCode,
		Amount:           op.amount.StringFixed(2),
		Currency:         op.currency,
		Network:          op.network,
		Requests:         op.requests,
		Pushes:           op.pushes,
		CallbacksSent:    op.callbacksSent,
		CallbackAttempts: op.callbackTries,
		CreatedAt:        op.createdAt,
	}
}

// Operations returns every operation the server accepted, oldest first.
func (s *Server) Operations() []OperationView {
	s.mu.Lock()
	defer s.mu.Unlock()
	views := make([]OperationView, 0, len(s.order))
	for _, op := range s.order {
		views = append(views, op.view())
	}
	return views
}

// findLocked returns the operations with reference, oldest first, keeping only those of
// gatewayName and kind when they are given.
func (s *Server) findLocked(reference, gatewayName string, kind gateway.CallbackKind) []*operation {
	var found []*operation
	for _, op := range s.order {
		if op.reference == reference && (gatewayName == "" || op.gateway.Name == gatewayName) &&
			(kind == "" || op.kind == kind) {
			found = append(found, op)
		}
	}
	return found
}

// listOperations answers GET /sandbox/operations with a JSON array, oldest first; optional
// ?gateway=, ?kind= and ?status= filter it.
func (s *Server) listOperations(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	views := []OperationView{}
	for _, v := range s.Operations() {
		if (q.Get("gateway") == "" || v.Gateway == q.Get("gateway")) &&
			(q.Get("kind") == "" || string(v.Kind) == q.Get("kind")) &&
			(q.Get("status") == "" || string(v.Status) == q.Get("status")) {
			views = append(views, v)
		}
	}
	writeJSON(w, http.StatusOK, views)
}

// getOperation answers GET /sandbox/operations/{reference}: the newest operation with the
// reference (optional ?gateway= and ?kind= narrow it), or 404 not_found.
func (s *Server) getOperation(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	found := s.findLocked(r.PathValue("reference"), r.URL.Query().Get("gateway"),
		gateway.CallbackKind(r.URL.Query().Get("kind")))
	var view OperationView
	if len(found) > 0 {
		view = found[len(found)-1].view()
	}
	s.mu.Unlock()
	if len(found) == 0 {
		writeError(w, errNotFound)
		return
	}
	writeJSON(w, http.StatusOK, view)
}
