package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/sikahq/sika"
)

// awaitApproval holds a payout that waits for a second member's approval (the plan says until
// when) and prepares it again once it no longer waits: approved, it is PENDING and the run
// sends it; rejected, it ended FAILED in the same Postgres transaction as the decision and the
// run ends. Until its approval expires it waits for SignalPayoutApprovalDecided, reading the
// payout again at least every decisionCheckEvery in case a signal was lost; once due it asks
// the store to expire it (under the payout's lock, so an approval that committed first wins).
// Nothing is sent while it waits: PreparePayment gives no gateway to a payout that is not
// PENDING.
func (p *payment) awaitApproval(ctx workflow.Context) error {
	decided := workflow.GetSignalChannel(ctx, SignalPayoutApprovalDecided)
	for p.plan.AwaitApprovalUntil != nil {
		if remaining := p.plan.AwaitApprovalUntil.Sub(workflow.Now(ctx)); remaining > 0 {
			waitSignalOrTimer(ctx, decided, min(remaining, decisionCheckEvery))
		} else {
			var status sika.TransactionStatus
			if err := workflow.ExecuteLocalActivity(ctx, a.ExpirePayoutApproval, p.in.TransactionID).Get(ctx, &status); err != nil {
				return err
			}
			if status == sika.StatusAwaitingApproval {
				// Not due yet by the database's clock (the worker's runs ahead): again shortly.
				waitSignalOrTimer(ctx, decided, 10*time.Second)
			}
		}
		if err := workflow.ExecuteLocalActivity(ctx, a.PreparePayment, p.in).Get(ctx, &p.plan); err != nil {
			return err
		}
	}
	return nil
}

// waitSignalOrTimer waits for a signal on ch or for d, whichever comes first; signals that
// came together count as one (the waiter reads its state again either way).
func waitSignalOrTimer(ctx workflow.Context, ch workflow.ReceiveChannel, d time.Duration) {
	timerCtx, cancel := workflow.WithCancel(ctx)
	defer cancel()
	sel := workflow.NewSelector(ctx)
	sel.AddFuture(workflow.NewTimer(timerCtx, d), func(workflow.Future) {})
	sel.AddReceive(ch, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
	sel.Select(ctx)
	for ch.ReceiveAsync(nil) {
	}
}
