package api

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

// decidedWorkflow is a Temporal client whose payment workflows have just been decided: they
// answer confirm-otp with ErrNoOTPExpected.
type decidedWorkflow struct{ client.Client }

func (decidedWorkflow) UpdateWorkflow(context.Context, client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	return nil, temporal.NewApplicationError("this payment does not take an OTP confirmation", workflows.ErrNoOTPExpected)
}

// A code that reaches the workflow just after the payment was decided (found by make chaos:
// the customer's code got through, the push succeeded, and the merchant was told 400): the
// answer is the payment as it stands, 200 when it succeeded and not_pending otherwise.
func TestConfirmOTPWhenDecidedMeanwhile(t *testing.T) {
	ts := newTestServer(t, func(c *Config) { c.Temporal = decidedWorkflow{} })
	acct := ts.newAccount(t, true)
	ctx := t.Context()
	n, err := testStore.NetworkByCode(ctx, "MOOV_BJ")
	require.NoError(t, err)
	pending := func(status sika.TransactionStatus) sika.Transaction {
		id, err := uuid.NewV7()
		require.NoError(t, err)
		ref, err := sika.NewReference("PAY", time.Now())
		require.NoError(t, err)
		a := sika.NewAmount(dec("1000"))
		tx, outbox, _, err := testStore.CreateTransaction(ctx, store.NewTransaction{Transaction: sika.Transaction{
			ID: id, Reference: ref, Merchant: acct.Merchant.ID, Environment: sika.EnvironmentTest, Type: sika.TypePayment,
			RequestedAmount: a, DebitedAmount: a, NetAmount: a, Currency: "XOF", Country: "BJ",
			NetworkID: n.ID, Network: n.Code, CustomerPhone: "+22997000123", CustomerName: "Late code", FeeChargeMode: sika.FeeDeducted,
		}}, store.WorkflowStart{ID: "decided-" + id.String(), Type: "none"})
		require.NoError(t, err)
		require.NoError(t, testStore.DeleteOutbox(ctx, outbox))
		_, _, err = testStore.CompletePayment(ctx, store.Completion{TransactionID: id, Run: 1, Status: status,
			Reason: "decided", TriggeredBy: sika.TriggerSystem})
		require.NoError(t, err)
		return tx // as read before the decision: PENDING
	}

	require.NoError(t, ts.Server.confirmPostPushOTP(ctx, pending(sika.StatusSuccess), "123456"), "the code got through")
	err = ts.Server.confirmPostPushOTP(ctx, pending(sika.StatusFailed), "123456")
	assert.Equal(t, sika.CodeNotPending, sika.ErrorCode(err), "%v", err)
}
