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
		read := gw.CollectionStatus
		if t.FlowDirection == sika.DirectionOutbound {
			read = gw.DisbursementStatus
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

// ReconcileLateAnswer is the activity of the same name, for a workflow that received a
// success after it had recorded its run's end.
func (a *Activities) ReconcileLateAnswer(ctx context.Context, in LateAnswer) (store.ReconcileOutcome, error) {
	return ReconcileLateAnswer(ctx, a.Store, a.Gateways, in)
}

// RecheckSweepResult reports one re-check sweep.
type RecheckSweepResult struct {
	Read, Reconciled, Closed int
}

// recheckBatch bounds one sweep; the next sweep takes the rest.
const recheckBatch = 200

// RecheckEndedAttempts re-reads at their gateways the attempts that ended without the
// operator's final word (a collection expired with its cancel unclear, a payout support ended
// FAILED) and not read in the last interval: a
// SUCCESS is reconciled, a FAILED ends the re-reads, anything else waits for the next sweep
// (until the operator's late-success window closes).
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
			read := gw.CollectionStatus
			if t.FlowDirection == sika.DirectionOutbound {
				read = gw.DisbursementStatus // a payout support ended without the operator's word
			}
			st, err := read(ctx, attempt.ID.String())
			if err == nil {
				answer, final = string(st.Status), st.Status.Final()
				if st.Status == gateway.StatusSuccess {
					out, err := ReconcileLateAnswer(ctx, a.Store, a.Gateways, LateAnswer{AttemptID: attempt.ID, Status: st.Status,
						GatewayReference: st.GatewayReference, Trusted: true, Source: "re-check sweep"})
					if err != nil {
						return res, err
					}
					logger.Info("late success reconciled", "attempt", attempt.ID, "gateway", attempt.Gateway, "outcome", out)
					res.Reconciled++
					continue
				}
			} else {
				logger.Warn("re-check unavailable", "attempt", attempt.ID, "gateway", attempt.Gateway, "err", err)
			}
		}
		if final {
			res.Closed++
		}
		if err := a.Store.NoteRecheck(ctx, attempt.ID, answer, final); err != nil {
			return res, err
		}
	}
	return res, nil
}
