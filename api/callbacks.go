package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"
	"go.temporal.io/api/serviceerror"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/workflows"
)

// maxCallbackBody bounds what a gateway may post.
const maxCallbackBody = 64 << 10

// gatewayCallback receives an operator's report, authenticated by the gateway that claims to
// have sent it, and hands it to the payment's workflow. It answers 200 for anything it
// authenticated, including duplicates and reports on finished payments: the workflow ignores
// what it no longer needs, and an operator that sees errors only sends more.
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
	attempt, err := s.store.Attempt(ctx, attemptID)
	if err == nil && attempt.Gateway != name {
		// Signed by one gateway about another gateway's attempt: not this gateway's to report.
		logFrom(r.Context()).Warn("callback about another gateway's attempt", "gateway", name, "attempt_gateway", attempt.Gateway)
		err = sika.NotFound("Attempt")
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	t, err := s.store.Transaction(ctx, attempt.Transaction)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if attempt.Status == sika.AttemptPending && t.Status == sika.StatusPending && t.Run == attempt.Run {
		workflowID := workflows.PaymentWorkflowID(attempt.Transaction)
		if cb.Kind == gateway.CallbackDisbursement {
			workflowID = workflows.PayoutWorkflowID(attempt.Transaction)
		}
		err = s.cfg.Temporal.SignalWorkflow(ctx, workflowID, "", workflows.SignalGatewayCallback,
			workflows.GatewayCallback{AttemptID: attempt.ID, Status: cb.Status, GatewayReference: cb.GatewayReference,
				FailureCode: cb.FailureCode, FailureMessage: cb.FailureMessage, Trusted: cb.Trusted})
		var notFound *serviceerror.NotFound
		if !errors.As(err, &notFound) {
			if err != nil {
				writeError(w, r, err)
				return
			}
			writeData(w, http.StatusOK, map[string]bool{"received": true})
			return
		}
		// No workflow is waiting any more: the report is late, as below.
	}
	if err := s.reconcileLateCallback(ctx, attempt, cb); err != nil {
		writeError(w, r, err)
		return
	}
	writeData(w, http.StatusOK, map[string]bool{"received": true})
}

// reconcileLateCallback acts on a callback about an attempt whose run has ended (or been
// replaced by a retry): a success, verified by its signature or else by a status read, is
// reconciled (credited exactly once, or flagged for support); anything else is only logged.
// An error is answered 5xx so that an operator that retries sends it again.
func (s *Server) reconcileLateCallback(ctx context.Context, attempt sika.TransactionAttempt, cb gateway.Callback) error {
	log := logFrom(ctx).With("gateway", attempt.Gateway, "attempt", attempt.ID, "status", cb.Status)
	if cb.Status != gateway.StatusSuccess || attempt.Status == sika.AttemptSuccess {
		log.Info("callback for an ended run: nothing to reconcile")
		return nil
	}
	source := "signed callback"
	if !cb.Trusted {
		source = "unsigned callback"
	}
	out, err := activities.ReconcileLateAnswer(ctx, s.store, s.cfg.Gateways, activities.LateAnswer{AttemptID: attempt.ID, Status: cb.Status,
		GatewayReference: cb.GatewayReference, Trusted: cb.Trusted, Source: source})
	if err != nil {
		return fmt.Errorf("reconcile late callback: %w", err)
	}
	log.Warn("late success reconciled", "outcome", out)
	return nil
}
