package workflows

import (
	"context"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/workflow"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// CheckoutExpiryWorkflowType is the outbox type of a checkout session's expiry.
const CheckoutExpiryWorkflowType = "CheckoutExpiry"

// CheckoutExpiryWorkflowID is the id of a session's expiry workflow: one per session.
func CheckoutExpiryWorkflowID(sessionID uuid.UUID) string {
	return "checkout-expiry:" + sessionID.String()
}

// SignalCheckoutSessionClosed tells a session's expiry workflow that the session left PENDING
// (cancelled or paid): it checks the status and ends.
const SignalCheckoutSessionClosed = "checkout-session-closed"

// checkoutStatusCheckEvery bounds each sleep of the expiry workflow: between two sleeps it reads
// the session and ends early once the session is no longer PENDING (a paid session sends no
// signal).
const checkoutStatusCheckEvery = time.Hour

// CheckoutExpiryInput names the session to expire and when.
type CheckoutExpiryInput struct {
	SessionID uuid.UUID
	ExpiresAt time.Time
}

// CheckoutExpiryStart is the outbox entry that starts a session's expiry workflow.
func CheckoutExpiryStart(in CheckoutExpiryInput) store.WorkflowStart {
	return store.WorkflowStart{ID: CheckoutExpiryWorkflowID(in.SessionID), Type: CheckoutExpiryWorkflowType, Input: in}
}

// StartCheckoutExpiry starts a session's expiry workflow; one already started under the id (by
// the API or the outbox sweeper) is fine.
func StartCheckoutExpiry(ctx context.Context, c client.Client, in CheckoutExpiryInput) error {
	return startOnce(ctx, c, CheckoutExpiryWorkflowID(in.SessionID), TaskQueue, CheckoutExpiry, in)
}

// CheckoutExpiry sleeps until the session's expires_at, then moves it from PENDING to EXPIRED.
// A cancel (signal) or a payment (seen by the status check between sleeps) ends it early. The
// move itself is conditional in Postgres, so a payment or cancel that commits first always wins
// and the session leaves PENDING exactly once. It returns the session's final status.
func CheckoutExpiry(ctx workflow.Context, in CheckoutExpiryInput) (sika.CheckoutStatus, error) {
	ctx = withStoreStepOptions(ctx)
	e := &checkoutExpiry{in: in, closed: workflow.GetSignalChannel(ctx, SignalCheckoutSessionClosed)}
	for {
		remaining := in.ExpiresAt.Sub(workflow.Now(ctx))
		if remaining <= 0 {
			return e.expire(ctx)
		}
		e.sleep(ctx, min(remaining, checkoutStatusCheckEvery))
		if e.signalled || in.ExpiresAt.After(workflow.Now(ctx)) {
			e.signalled = false
			status, err := e.status(ctx)
			if err != nil || status != sika.CheckoutPending {
				return status, err
			}
		}
	}
}

type checkoutExpiry struct {
	in        CheckoutExpiryInput
	closed    workflow.ReceiveChannel
	signalled bool
}

// sleep waits for d or the closed signal, whichever comes first; the timer is cancelled when
// the signal wins.
func (e *checkoutExpiry) sleep(ctx workflow.Context, d time.Duration) {
	timerCtx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(workflow.NewTimer(timerCtx, d), func(workflow.Future) {})
	sel.AddReceive(e.closed, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, nil)
		e.signalled = true
	})
	sel.Select(ctx)
}

func (e *checkoutExpiry) status(ctx workflow.Context) (sika.CheckoutStatus, error) {
	var status sika.CheckoutStatus
	err := workflow.ExecuteActivity(ctx, a.CheckoutSessionStatus, e.in.SessionID).Get(ctx, &status)
	return status, err
}

func (e *checkoutExpiry) expire(ctx workflow.Context) (sika.CheckoutStatus, error) {
	var status sika.CheckoutStatus
	err := workflow.ExecuteActivity(ctx, a.ExpireCheckoutSession, e.in.SessionID).Get(ctx, &status)
	return status, err
}
