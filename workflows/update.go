package workflows

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/activities"
)

// UpdateOperation sends an update to the workflow that decides a pending transaction and
// waits for its result (result may be nil). The API answers a push payment before its
// workflow has started (the start goes on after the answer, backed by the outbox), so a
// merchant who confirms an OTP or asks for a verify at once can find no workflow yet: then
// the workflow is started here (a start that races the API's or the sweeper's is harmless)
// and the update is sent once more.
func UpdateOperation(ctx context.Context, c client.Client, t sika.Transaction, name string, arg any, result any) error {
	id := WorkflowIDOf(t)
	if id == "" {
		return fmt.Errorf("update %s: transaction %s has no workflow", name, t.ID)
	}
	send := func() error {
		opts := client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: name, WaitForStage: client.WorkflowUpdateStageCompleted}
		if arg != nil {
			opts.Args = []any{arg}
		}
		h, err := c.UpdateWorkflow(ctx, opts)
		if err != nil {
			return err
		}
		return h.Get(ctx, result)
	}
	err := send()
	var missing *serviceerror.NotFound
	if !errors.As(err, &missing) {
		return err
	}
	in := activities.PaymentInput{TransactionID: t.ID, Run: t.Run}
	start := StartPayment
	switch t.Type {
	case sika.TypePayout:
		start = StartPayout
	case sika.TypeRefund:
		start = StartRefund
	}
	if err := start(ctx, c, in); err != nil {
		return fmt.Errorf("update %s: %w", name, err)
	}
	return send()
}
