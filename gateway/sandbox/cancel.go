package sandbox

import (
	"net/http"

	"github.com/sikahq/sika/gateway"
)

// cancelledCollection is the outcome of a collection withdrawn by its merchant's service.
var cancelledCollection = failed(gateway.FailureCancelled, "The collection was cancelled before the customer approved it.")

// cancelCollection answers POST /gw/{name}/v1/collections/{reference}/cancel with the
// collection's state after the cancel: a pending one is withdrawn (FAILED cancelled, its
// callback sent, its timers stopped), except a 011 one, whose customer is approving it (the
// cancel is refused: still PENDING; a 011 one still awaiting its post-push OTP is cancelled);
// a final one is answered as it stands. A reference the
// operator does not show (unknown, or a 010 not found yet) is 404 not_found.
func (s *Server) cancelCollection(w http.ResponseWriter, r *http.Request) {
	gw, ok := s.authorize(w, r)
	if !ok {
		return
	}
	body, e := s.withdraw(gw, r.PathValue("reference"))
	answer(w, body, e)
}

// withdraw cancels the collection of reference at gw, as cancelCollection describes.
func (s *Server) withdraw(gw GatewayConfig, reference string) (statusBody, *apiError) {
	return s.onCollection(gw, reference, func(op *operation) (statusBody, *apiError) {
		switch {
		case op.status.Final():
			op.log.Info("sandbox cancel of a final operation", "status", op.status)
		case op.scenario.late && !op.awaitingOTP:
			op.log.Info("sandbox cancel refused: the customer is approving", "suffix", op.scenario.suffix)
		default:
			s.resolveLocked(op, cancelledCollection, "cancel")
		}
		body := op.statusBody()
		body.NextAction = nil
		return body, nil
	})
}
