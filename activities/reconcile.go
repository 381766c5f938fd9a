package activities

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
)

// LateAnswer is an operator's report about an attempt whose run may have ended: a callback
// that found no workflow waiting for it, a status read by verify or support, a re-check.
type LateAnswer struct {
	AttemptID        uuid.UUID
	Status           gateway.Status
	GatewayReference string
	// Trusted is false for a report that is not authenticated (an unsigned callback): the
	// status is then read at the gateway before anything is done.
	Trusted bool
	// Source names where it came from, for the status log ("signed callback", "re-check sweep"…).
	Source string
}

// ReconcileLateAnswer acts on a late report: a verified SUCCESS is reconciled
// (store.ReconcileSuccess: credited exactly once, or flagged); anything else changes nothing.
// It answers what was done ("" when nothing).
func ReconcileLateAnswer(ctx context.Context, st *store.Store, gws *gateway.Router, in LateAnswer) (store.ReconcileOutcome, error) {
	if !in.Trusted {
		attempt, err := st.Attempt(ctx, in.AttemptID)
		if err != nil {
			return "", fmt.Errorf("reconcile: %w", err)
		}
		t, err := st.Transaction(ctx, attempt.Transaction)
		if err != nil {
			return "", fmt.Errorf("reconcile: %w", err)
		}
		gw, err := gws.Gateway(attempt.Gateway)
		if err != nil {
			return "", fmt.Errorf("reconcile: %w", err)
		}
		read, err := StatusReader(ctx, st, gw, t)
		if err != nil {
			return "", fmt.Errorf("reconcile: %w", err)
		}
		rs, err := read(ctx, attempt.ID.String())
		if err != nil {
			return "", fmt.Errorf("reconcile: read status at %s: %w", attempt.Gateway, err)
		}
		in.Status, in.Trusted, in.Source = rs.Status, true, in.Source+" confirmed by a status read"
		if rs.GatewayReference != "" {
			in.GatewayReference = rs.GatewayReference
		}
	}
	if in.Status != gateway.StatusSuccess {
		return "", nil
	}
	_, out, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: in.AttemptID, GatewayReference: in.GatewayReference, Source: in.Source})
	return out, err
}

// ReceiveCallback is what Sika does with an operator's authenticated callback about one of
// its attempts before answering the operator (gatewayName: the gateway that authenticated it;
// an attempt sent through another gateway is not its to report: store.ErrAnotherGatewaysAttempt,
// nothing done). A signed success is written durably first (store.ReconcileSuccess, in one
// Postgres transaction that locks the attempt and its transaction: decided at once, or kept for
// the run still deciding the payment); a callback about an attempt of the run that decides its
// transaction is then handed to the workflow (signal, which answers false when no workflow takes
// it any more); any other success, signed or confirmed by a status read, is reconciled. An error
// means nothing durable was written for a success: the operator must be answered 5xx, so that it
// sends again. It answers what the success did ("" when nothing).
func ReceiveCallback(ctx context.Context, st *store.Store, gws *gateway.Router, gatewayName string, attemptID uuid.UUID, cb gateway.Callback,
	signal func(context.Context, sika.Transaction) (bool, error)) (store.ReconcileOutcome, error) {
	if cb.Trusted && cb.Status == gateway.StatusSuccess {
		// Kept before the workflow is told and the operator answered: a signal the run no longer
		// takes (it is closing) cannot lose it; the run's end processes it.
		t, out, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: attemptID, GatewayReference: cb.GatewayReference,
			Source: "signed callback", Gateway: gatewayName})
		if err != nil {
			return "", fmt.Errorf("keep callback: %w", err)
		}
		if out != store.ReconcileInFlight {
			return out, nil // decided at once: credited late, flagged, or already recorded
		}
		if taken, err := signal(ctx, t); err != nil || taken {
			return out, err
		}
		return receiveLate(ctx, st, gws, attemptID, cb)
	}
	attempt, t, err := st.AttemptAndTransaction(ctx, attemptID)
	if err != nil {
		return "", err
	}
	if attempt.Gateway != gatewayName {
		return "", store.ErrAnotherGatewaysAttempt
	}
	if attempt.Status == sika.AttemptPending && t.Status == sika.StatusPending && t.Run == attempt.Run {
		if taken, err := signal(ctx, t); err != nil || taken {
			return "", err
		}
	}
	if cb.Status != gateway.StatusSuccess || attempt.Status == sika.AttemptSuccess {
		return "", nil // a failure or a duplicate about an ended run: nothing to change
	}
	return receiveLate(ctx, st, gws, attemptID, cb)
}

// receiveLate reconciles a callback's success that no running workflow took.
func receiveLate(ctx context.Context, st *store.Store, gws *gateway.Router, attemptID uuid.UUID, cb gateway.Callback) (store.ReconcileOutcome, error) {
	source := "signed callback"
	if !cb.Trusted {
		source = "unsigned callback"
	}
	out, err := ReconcileLateAnswer(ctx, st, gws, LateAnswer{AttemptID: attemptID, Status: cb.Status,
		GatewayReference: cb.GatewayReference, Trusted: cb.Trusted, Source: source})
	if err != nil {
		return "", fmt.Errorf("reconcile callback: %w", err)
	}
	return out, nil
}

// ReconcileLateAnswer is the activity of the same name, for a workflow that received a
// success after it had recorded its run's end.
func (a *Activities) ReconcileLateAnswer(ctx context.Context, in LateAnswer) (store.ReconcileOutcome, error) {
	return ReconcileLateAnswer(ctx, a.Store, a.Gateways, in)
}

// RecheckSweepResult reports one re-check sweep.
type RecheckSweepResult struct {
	Read, Reconciled, Closed, Flagged, Answers int
}

// recheckBatch bounds one sweep; the next sweep takes the rest.
const recheckBatch = 200

// RecheckEndedAttempts re-reads at their gateways the attempts that ended without the
// operator's final word (a collection expired with its cancel unclear, a run support ended)
// and not read in the last interval: a SUCCESS is reconciled, a FAILED of an attempt support
// recorded SUCCESS is flagged, any final answer ends the re-reads, anything else waits for the
// next sweep (until the operator's late-success window closes). It then processes the
// operators' inbox rows that no run's end took (store.ProcessOperatorAnswers).
func (a *Activities) RecheckEndedAttempts(ctx context.Context, interval time.Duration) (RecheckSweepResult, error) {
	var res RecheckSweepResult
	due, err := a.Store.DueRechecks(ctx, interval, recheckBatch)
	if err != nil {
		return res, err
	}
	logger := activity.GetLogger(ctx)
	for _, attempt := range due {
		res.Read++
		answer, final := string(OutcomeUnknown), false
		t, err := a.Store.Transaction(ctx, attempt.Transaction)
		if err != nil {
			return res, err
		}
		if gw, err := a.Gateways.Gateway(attempt.Gateway); err == nil {
			// A payout support ended without the operator's word is read as a payout.
			read, err := StatusReader(ctx, a.Store, gw, t)
			if err != nil {
				return res, err
			}
			st, err := read(ctx, attempt.ID.String())
			switch {
			case err != nil:
				logger.Warn("re-check unavailable", "attempt", attempt.ID, "gateway", attempt.Gateway, "err", err)
			case st.Status == gateway.StatusSuccess:
				out, err := ReconcileLateAnswer(ctx, a.Store, a.Gateways, LateAnswer{AttemptID: attempt.ID, Status: st.Status,
					GatewayReference: st.GatewayReference, Trusted: true, Source: "re-check sweep"})
				if err != nil {
					return res, err
				}
				logger.Info("late success reconciled", "attempt", attempt.ID, "gateway", attempt.Gateway, "outcome", out)
				res.Reconciled++
				answer, final = string(st.Status), true
			case st.Status == gateway.StatusFailed && attempt.Status == sika.AttemptSuccess:
				flagged, err := a.Store.ReconcileFailure(ctx, attempt.ID, "re-check sweep")
				if err != nil {
					return res, err
				}
				if flagged {
					logger.Warn("operator failed an attempt recorded SUCCESS", "attempt", attempt.ID, "gateway", attempt.Gateway)
					res.Flagged++
				}
				res.Closed++
				continue
			case st.Status == gateway.StatusNotFound && attempt.FailureCode == gateway.FailureGatewayUnavailable &&
				attempt.CompletedAt != nil && time.Since(*attempt.CompletedAt) >= gateway.WindowsOf(gw).NotFoundSettle:
				// Closed on a 503 and still unknown to the operator after its settle window:
				// nothing was created. Its final word.
				answer, final = string(st.Status), true
			default:
				answer, final = string(st.Status), st.Status.Final()
			}
		}
		if final {
			res.Closed++
		}
		if err := a.Store.NoteRecheck(ctx, attempt.ID, answer, final); err != nil {
			return res, err
		}
	}
	// A kept answer is normally processed by its run's end; those older than an interval are
	// past any run that ended normally.
	if res.Answers, err = a.Store.ProcessOperatorAnswers(ctx, interval, recheckBatch); err != nil {
		return res, err
	}
	return res, nil
}
