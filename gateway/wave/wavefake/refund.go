package wavefake

import (
	"net/http"

	"github.com/sikahq/sika/gateway/gatewaytest"
)

// refund is POST /v1/checkout/sessions/{id}/refund (no body): a session whose payment succeeded
// is refunded whole, once, and answered 200 with an empty body; its payment_status then reads
// "refunded". A session not paid, or already refunded, answers 409 checkout-refund-failed; an
// unknown id 404 checkout-session-not-found. The next Behaviour applies: Unavailable503 answers
// 503 and refunds nothing, Decline answers 400 checkout-refund-failed, TimeoutAfterAccept
// refunds and never answers.
func (f *Server) refund(w http.ResponseWriter, r *http.Request, id string) {
	f.Mu.Lock()
	s := f.sessions[id]
	if s == nil {
		f.Mu.Unlock()
		writeError(w, http.StatusNotFound, "checkout-session-not-found", "Checkout session not found.")
		return
	}
	b := f.Take()
	switch {
	case b == gatewaytest.Unavailable503:
		f.Mu.Unlock()
		writeError(w, http.StatusServiceUnavailable, "service-unavailable", "Service unavailable, try again later.")
		return
	case b == gatewaytest.Decline:
		f.Mu.Unlock()
		writeError(w, http.StatusBadRequest, "checkout-refund-failed", "The refund could not be made.")
		return
	case s.paymentStatus != "succeeded":
		f.Mu.Unlock()
		writeError(w, http.StatusConflict, "checkout-refund-failed", "Only a paid checkout session can be refunded, once.")
		return
	}
	s.paymentStatus = "refunded"
	f.refunds++
	f.Mu.Unlock()
	if b == gatewaytest.TimeoutAfterAccept {
		select { // refunded, but the answer never comes
		case <-r.Context().Done():
		case <-f.closed:
		}
		return
	}
	w.WriteHeader(http.StatusOK)
}
