package store_test

import (
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
)

// newAttempt records attempt seq of run of tx at sandbox-a.
func newAttempt(t *testing.T, tx sika.Transaction, run, seq int) sika.TransactionAttempt {
	t.Helper()
	a, err := st.EnsureAttempt(t.Context(), tx, sika.TransactionAttempt{ID: uuid.New(), Run: run, Sequence: seq, Gateway: "sandbox-a", Priority: 1})
	require.NoError(t, err)
	return a
}

// expire records tx's run ended FAILED expired on attempt a, its cancel unclear.
func expire(t *testing.T, tx sika.Transaction, a sika.TransactionAttempt, run int) {
	t.Helper()
	_, changed, err := st.CompletePayment(t.Context(), store.Completion{TransactionID: tx.ID, Run: run, Gateway: a.Gateway, Status: sika.StatusFailed,
		Reason: "Refused by sandbox-a: expired", TriggeredBy: sika.TriggerSystem, RecheckFor: time.Hour,
		Attempt: store.AttemptUpdate{ID: a.ID, Status: sika.AttemptFailed, FailureCode: gateway.FailureExpired, FailureMessage: "not approved in time"}})
	require.NoError(t, err)
	require.True(t, changed)
}

func available(t *testing.T, m sika.Merchant) string {
	t.Helper()
	wallets, _, err := st.ListWallets(t.Context(), m.ID, sika.EnvironmentTest, store.PageRequest{Page: 1, PageSize: 10})
	require.NoError(t, err)
	if len(wallets) == 0 {
		return "0.00"
	}
	return sika.FormatAmount(wallets[0].AvailableAmount.Decimal)
}

func countRows(t *testing.T, query string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, st.Pool().QueryRow(t.Context(), query, args...).Scan(&n))
	return n
}

func TestReconcileLateSuccessCreditsOnce(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	tx := newPayment(t, m, "700")
	a := newAttempt(t, tx, 1, 1)
	expire(t, tx, a, 1)

	due, err := st.DueRechecks(ctx, time.Minute, 1000)
	require.NoError(t, err)
	assert.Contains(t, attemptIDs(due), a.ID, "an attempt whose cancel was unclear is re-read")

	// A retry now could charge the customer a second time.
	_, _, err = st.RetryPayment(ctx, m.ID, sika.EnvironmentTest, tx.ID, store.RetryKey{}, nil, "", nil, func(sika.Transaction) store.WorkflowStart {
		return store.WorkflowStart{ID: "payment:" + tx.ID.String(), Type: "Payment", Input: 2}
	})
	assert.Equal(t, sika.CodeOutcomeUnresolved, sika.ErrorCode(err), "%v", err)

	// The success arrives from several places at once (callback, sweep, support re-check).
	const n = 8
	outcomes := make([]store.ReconcileOutcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, out, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a.ID, GatewayReference: "op-77", Source: "signed callback"})
			assert.NoError(t, err)
			outcomes[i] = out
		}()
	}
	wg.Wait()
	credited := 0
	for _, o := range outcomes {
		if o == store.ReconcileCredited {
			credited++
		} else {
			assert.Equal(t, store.ReconcileAlready, o)
		}
	}
	assert.Equal(t, 1, credited, "exactly one reconciliation credits")
	assert.Equal(t, "700.00", available(t, m), "credited once")

	d, err := st.TransactionDetail(ctx, m.ID, sika.EnvironmentTest, tx.ID)
	require.NoError(t, err)
	assert.Equal(t, sika.StatusSuccess, d.Status)
	assert.Equal(t, "", d.FailureCode)
	require.Len(t, d.StatusLogs, 3)
	last := d.StatusLogs[2]
	assert.Equal(t, sika.StatusFailed, *last.FromStatus)
	assert.Equal(t, sika.StatusSuccess, last.ToStatus)
	assert.Equal(t, sika.TriggerSystem, last.TriggeredBy)
	assert.Contains(t, last.Reason, "Reconciled: sandbox-a reported attempt "+a.ID.String()+" paid (signed callback)")
	assert.Contains(t, last.Reason, "recorded FAILED expired")
	require.Len(t, d.Attempts, 1)
	assert.Equal(t, sika.AttemptSuccess, d.Attempts[0].Status)
	assert.Equal(t, "op-77", d.Attempts[0].GatewayReference)
	assert.Equal(t, 1, countRows(t, `SELECT count(*) FROM events WHERE transaction_id = $1 AND type = 'transaction.succeeded'`, tx.ID),
		"the merchant's webhook tells them")
	assert.Equal(t, 1, countRows(t, `SELECT count(*) FROM ledger_entries WHERE transaction_id = $1 AND attempt_id = $2`, tx.ID, a.ID))

	due, err = st.DueRechecks(ctx, 0, 1000)
	require.NoError(t, err)
	assert.NotContains(t, attemptIDs(due), a.ID, "a reconciled attempt is not re-read")
	disc, err := st.CheckLedger(ctx)
	require.NoError(t, err)
	assert.Nil(t, disc)
}

func TestReconcileAnAttemptInFlightIsLeftToItsWorkflow(t *testing.T) {
	m := newMerchant(t)
	tx := newPayment(t, m, "40")
	a := newAttempt(t, tx, 1, 1)
	_, out, err := st.ReconcileSuccess(t.Context(), store.LateSuccess{AttemptID: a.ID, Source: "signed callback"})
	require.NoError(t, err)
	assert.Equal(t, store.ReconcileInFlight, out)
	assert.Equal(t, "0.00", available(t, m))
	got, err := st.Attempt(t.Context(), a.ID)
	require.NoError(t, err)
	assert.Equal(t, sika.AttemptPending, got.Status, "the workflow stays the only writer of its run's outcome")
}

func TestASecondSuccessIsCreditedAndFlaggedForRefund(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	tx := newPayment(t, m, "300")
	first := newAttempt(t, tx, 1, 1)
	second := newAttempt(t, tx, 1, 2)
	c := success(tx)
	c.Attempt = store.AttemptUpdate{ID: first.ID, Status: sika.AttemptSuccess}
	_, _, err := st.CompletePayment(ctx, c)
	require.NoError(t, err)

	_, out, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: second.ID, Source: "re-check sweep"})
	require.NoError(t, err)
	assert.Equal(t, store.ReconcileRefundDue, out)
	assert.Equal(t, "600.00", available(t, m), "what the operator received is in the wallet")
	mine := flagsOf(t, tx)
	require.Len(t, mine, 1)
	assert.Equal(t, store.FlagRefundDue, mine[0].Kind)
	assert.Equal(t, second.ID, *mine[0].Attempt)
	assert.Equal(t, "300.00", sika.FormatAmount(mine[0].Amount.Decimal))

	_, out, err = st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: second.ID, Source: "re-check sweep"})
	require.NoError(t, err)
	assert.Equal(t, store.ReconcileAlready, out)
	assert.Equal(t, "600.00", available(t, m), "still credited once per paid attempt")
	disc, err := st.CheckLedger(ctx)
	require.NoError(t, err)
	assert.Nil(t, disc)
}

func TestASuccessOfAReplacedRunIsReconciled(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	tx := newPayment(t, m, "120")
	a := newAttempt(t, tx, 1, 1)
	// Run 1 ended FAILED for good (a confirmed cancel), then the merchant retried.
	_, _, err := st.CompletePayment(ctx, store.Completion{TransactionID: tx.ID, Run: 1, Gateway: "sandbox-a", Status: sika.StatusFailed,
		Reason: "expired", TriggeredBy: sika.TriggerSystem, Attempt: store.AttemptUpdate{ID: a.ID, Status: sika.AttemptFailed, FailureCode: "expired"}})
	require.NoError(t, err)
	_, _, err = st.RetryPayment(ctx, m.ID, sika.EnvironmentTest, tx.ID, store.RetryKey{}, nil, "", nil, func(sika.Transaction) store.WorkflowStart {
		return store.WorkflowStart{ID: "payment:" + tx.ID.String(), Type: "Payment", Input: 2}
	})
	require.NoError(t, err)

	// Run 1's workflow (or the operator) then reports that attempt paid: never dropped.
	c := success(tx)
	c.Attempt = store.AttemptUpdate{ID: a.ID, Status: sika.AttemptSuccess, GatewayReference: "late"}
	got, changed, err := st.CompletePayment(ctx, c)
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, sika.StatusSuccess, got.Status)
	assert.Equal(t, "120.00", available(t, m))
	d, err := st.TransactionDetail(ctx, m.ID, sika.EnvironmentTest, tx.ID)
	require.NoError(t, err)
	last := d.StatusLogs[len(d.StatusLogs)-1]
	assert.Equal(t, sika.StatusPending, *last.FromStatus, "the retry's run was still pending")
	assert.Contains(t, last.Reason, "Reconciled:")
}

func attemptIDs(as []sika.TransactionAttempt) []uuid.UUID {
	out := make([]uuid.UUID, len(as))
	for i, a := range as {
		out[i] = a.ID
	}
	return out
}
