package api

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"go.temporal.io/api/serviceerror"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

// maxCallbackBody bounds what a gateway may post.
const maxCallbackBody = 64 << 10

// gatewayCallback receives an operator's report, authenticated by the gateway that claims to
// have sent it, and hands it to the payment's workflow. A success is written durably before
// the operator is answered 200: reconciled at once when its run has ended, else kept in the
// operators' inbox (store.ReconcileSuccess) for the run's end to process, whichever attempt of
// the run it is about. It answers 200 for anything it authenticated, including duplicates and
// reports on finished payments, and 5xx when it could not record a success, so that an
// operator that retries sends it again.
func (s *Server) gatewayCallback(w http.ResponseWriter, r *http.Request) {
	routeName(r)
	name := mux.Vars(r)["gateway"]
	gw, err := s.cfg.Gateways.Gateway(name)
	if err != nil {
		writeError(w, r, sika.NotFound("Gateway"))
		return
	}
	body, err := readBody(r, maxCallbackBody)
	if err != nil {
		writeError(w, r, err)
		return
	}
	cb, err := gw.ParseCallback(r.Context(), r.Header, body)
	if errors.Is(err, gateway.ErrCallbackIgnored) {
		logFrom(r.Context()).Info("gateway callback ignored", "gateway", name, "err", err)
		writeData(w, http.StatusOK, map[string]bool{"received": true})
		return
	}
	if err != nil {
		logFrom(r.Context()).Warn("gateway callback refused", "gateway", name, "err", err)
		writeError(w, r, sika.Errorf(sika.CodeInvalidCredentials, "The callback signature is not valid."))
		return
	}
	attemptID, err := uuid.Parse(cb.Reference)
	if err != nil {
		writeError(w, r, sika.NotFound("Attempt"))
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 10*time.Second)
	defer cancel()
	signal := func(ctx context.Context, t sika.Transaction) (bool, error) {
		// The workflow that decides the attempt's transaction (a payment, a payout, a refund),
		// whatever kind of operation the operator says it reports.
		err := s.cfg.Temporal.SignalWorkflow(ctx, workflows.WorkflowIDOf(t), "", workflows.SignalGatewayCallback,
			workflows.GatewayCallback{AttemptID: attemptID, Status: cb.Status, GatewayReference: cb.GatewayReference,
				FailureCode: cb.FailureCode, FailureMessage: cb.FailureMessage, Trusted: cb.Trusted})
		var notFound *serviceerror.NotFound
		if errors.As(err, &notFound) {
			return false, nil // no workflow is waiting any more: the report is late
		}
		return err == nil, err
	}
	out, err := activities.ReceiveCallback(ctx, s.store, s.cfg.Gateways, name, attemptID, cb, signal)
	if errors.Is(err, store.ErrAnotherGatewaysAttempt) {
		// Signed by one gateway about another gateway's attempt: not this gateway's to report.
		logFrom(r.Context()).Warn("callback about another gateway's attempt", "gateway", name, "attempt", attemptID)
		err = sika.NotFound("Attempt")
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	switch out {
	case "", store.ReconcileAlready:
	case store.ReconcileInFlight: // the usual case: kept, and the run deciding the payment takes it
		logFrom(r.Context()).Debug("operator success recorded", "gateway", name, "attempt", attemptID, "outcome", out)
	default: // a success outside its run: credited late, flagged, or a refund due
		logFrom(r.Context()).Warn("operator success recorded", "gateway", name, "attempt", attemptID, "outcome", out)
	}
	writeData(w, http.StatusOK, map[string]bool{"received": true})
}
