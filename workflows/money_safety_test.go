package workflows

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
	"github.com/sikahq/sika/gateway"
)

// Issue 17, case 1: a payout whose first send was unclear, whose status read then says "not
// found" and whose re-send meets an unavailable gateway must keep its hold: "not found" is not
// final while the operator may still be creating the transfer.
func TestPayoutUnclearKeepsItsHold(t *testing.T) {
	ambiguous := attempt(1, gwA, activities.OutcomeAmbiguous)
	notFound := as(ambiguous, activities.OutcomeNotFound)
	notFound.NotFoundSettle = 10 * time.Minute
	refusedAgain := unavailable(1, gwA)
	success := as(ambiguous, activities.OutcomeSuccess)

	t.Run("not found within the settle window and an unavailable re-send: it keeps waiting, and ends SUCCESS when the operator pays", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), ambiguous, refusedAgain, refusedAgain)
		r.payout = true
		r.checks = []activities.CollectionOutcome{notFound, notFound, as(ambiguous, activities.OutcomeUnknown), success}
		got := r.execute()
		check(t, "result", got, succeeded)
		r.wantStarted(startInput(1, gwA), resendInput(1, gwA), resendInput(1, gwA))
		r.wantChecked(ambiguous, secs(1, 3, 7, 15))
		r.wantCompleted(completion(success, sika.StatusSuccess, sika.TriggerSystem, "Confirmed by sandbox-a"), 15*time.Second)
	})
	t.Run("not found after the settle window and an unavailable re-send: a definite failure releases the hold", func(t *testing.T) {
		settled := notFound
		settled.NotFoundSettle = 30 * time.Second
		r := newPaymentRun(t, twoGateways(), ambiguous, refusedAgain, refusedAgain, refusedAgain, refusedAgain, refusedAgain)
		r.payout = true
		r.checks = []activities.CollectionOutcome{settled}
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailureGatewayUnavailable))
		r.wantChecked(ambiguous, secs(1, 3, 7, 15, 31))
		final := refusedAgain
		final.Kind = activities.OutcomeFailed
		final.FailureMessage = "The operator has no record of the request after its settle window and did not accept it again."
		r.wantCompleted(completion(final, sika.StatusFailed, sika.TriggerSystem, "Refused by sandbox-a: gateway_unavailable"), 31*time.Second)
	})
	t.Run("an ambiguous re-send restarts the settle window", func(t *testing.T) {
		settled := notFound
		settled.NotFoundSettle = 30*time.Second + 500*time.Millisecond
		// Counted from the first send, the window would have passed at the read of 31 s; but the
		// re-send of 1 s was unclear again, so the run waits until the read of 61 s.
		r := newPaymentRun(t, twoGateways(), ambiguous, ambiguous, refusedAgain, refusedAgain, refusedAgain, refusedAgain, refusedAgain)
		r.payout = true
		r.checks = []activities.CollectionOutcome{settled}
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailureGatewayUnavailable))
		r.wantChecked(ambiguous, secs(1, 3, 7, 15, 31, 61))
	})
	t.Run("a payout past the push lifetime keeps its backoff instead of reading in a loop", func(t *testing.T) {
		pending := attempt(1, gwA, activities.OutcomePending)
		plan := twoGateways()
		plan.PushLifetime = time.Minute
		r := newPaymentRun(t, plan, pending)
		r.payout = true
		r.checks = []activities.CollectionOutcome{pending, pending, pending, pending, pending, pending, as(pending, activities.OutcomeSuccess)}
		got := r.execute()
		check(t, "result", got, succeeded)
		r.wantChecked(pending, secs(3, 9, 21, 45, 75, 105, 135))
		check(t, "cancels", len(r.cancelled), 0)
	})
}

// Issue 17, case 2: a collection whose push lifetime ends is withdrawn at the operator before
// it is recorded FAILED; a success that still comes is reconciled, never dropped.
func TestCollectionExpiryAndLateSuccess(t *testing.T) {
	pending := attempt(1, gwA, activities.OutcomePending)
	expired := refused(pending, gateway.FailureExpired)
	expired.FailureMessage = "The customer did not approve the payment in time."

	t.Run("a confirmed cancel ends it FAILED for good", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), pending)
		r.checks = []activities.CollectionOutcome{pending}
		r.cancels = []activities.CollectionOutcome{refused(pending, gateway.FailureCancelled)}
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailureExpired))
		check(t, "cancelled", r.cancelled, []uuid.UUID{pending.AttemptID})
		withdrawn := expired
		withdrawn.FailureMessage += " The request was withdrawn at the operator."
		r.wantCompleted(completion(withdrawn, sika.StatusFailed, sika.TriggerSystem, "Refused by sandbox-a: expired"), 2*time.Minute)
	})
	t.Run("a customer who approved before the cancel makes it SUCCESS", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), pending)
		r.checks = []activities.CollectionOutcome{pending}
		r.cancels = []activities.CollectionOutcome{as(pending, activities.OutcomeSuccess)}
		got := r.execute()
		check(t, "result", got, succeeded)
		r.wantCompleted(completion(as(pending, activities.OutcomeSuccess), sika.StatusSuccess, sika.TriggerSystem, "Confirmed by sandbox-a"), 2*time.Minute)
	})
	t.Run("an unclear cancel ends it FAILED expired, re-read for the operator's window", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), pending)
		r.checks = []activities.CollectionOutcome{pending}
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailureExpired))
		r.wantCompleted(expiredUnclear(pending), 2*time.Minute)
		check(t, "reconciled", len(r.reconciled), 0)
	})
	t.Run("a signed success that arrives while FAILED is being recorded is reconciled before the workflow closes", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), pending)
		r.checks = []activities.CollectionOutcome{pending}
		r.completeTakes = 5 * time.Second
		r.callback(2*time.Minute+2*time.Second, trusted(pending, gateway.StatusSuccess, "late-ref"))
		got := r.execute()
		check(t, "result", got, failedWith(gateway.FailureExpired))
		r.wantCompleted(expiredUnclear(pending), 2*time.Minute+5*time.Second)
		check(t, "reconciled", r.reconciled, []activities.LateAnswer{{AttemptID: pending.AttemptID, Status: gateway.StatusSuccess,
			GatewayReference: "late-ref", Trusted: true, Source: "signed callback after the run ended"}})
	})
	t.Run("a success reported after the run recorded SUCCESS on that attempt changes nothing", func(t *testing.T) {
		r := newPaymentRun(t, twoGateways(), pending)
		r.checks = []activities.CollectionOutcome{as(pending, activities.OutcomeSuccess)}
		r.completeTakes = 5 * time.Second
		r.callback(4*time.Second, trusted(pending, gateway.StatusSuccess, "dup"))
		got := r.execute()
		check(t, "result", got, succeeded)
		check(t, "reconciled", len(r.reconciled), 0)
	})
}
