package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// newPayment creates a PENDING collection of net amount net for a merchant.
func newPayment(t *testing.T, m sika.Merchant, net string) sika.Transaction {
	t.Helper()
	ctx := t.Context()
	n, err := st.NetworkByCode(ctx, "MTN_CI")
	require.NoError(t, err)
	id, err := uuid.NewV7()
	require.NoError(t, err)
	ref, err := sika.NewReference("PAY", n.CreatedAt)
	require.NoError(t, err)
	amount := decimal.RequireFromString(net)
	tx := sika.Transaction{
		ID: id, Reference: ref, Merchant: m.ID, Environment: sika.EnvironmentTest, Type: sika.TypePayment,
		RequestedAmount: sika.NewAmount(amount), DebitedAmount: sika.NewAmount(amount), NetAmount: sika.NewAmount(amount),
		Currency: "XOF", Country: "CI", NetworkID: n.ID, Network: n.Code, CustomerPhone: "+2250707000123",
		FeeChargeMode: sika.FeeDeducted,
	}
	created, outbox, ok, err := st.CreateTransaction(ctx, store.NewTransaction{Transaction: tx}, store.WorkflowStart{ID: "payment:" + id.String(), Type: "Payment", Input: map[string]any{"x": 1}})
	require.NoError(t, err)
	require.True(t, ok)
	require.NotZero(t, outbox)
	return created
}

func success(tx sika.Transaction) store.Completion {
	return store.Completion{TransactionID: tx.ID, Run: 1, Gateway: "sandbox-a", Status: sika.StatusSuccess,
		Reason: "Confirmed", TriggeredBy: sika.TriggerSystem}
}

func TestCompletePaymentIsIdempotentUnderConcurrency(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	tx := newPayment(t, m, "985")
	var wg sync.WaitGroup
	changed := make([]bool, 10)
	for i := range changed {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, c, err := st.CompletePayment(ctx, success(tx))
			assert.NoError(t, err)
			changed[i] = c
		}(i)
	}
	wg.Wait()
	n := 0
	for _, c := range changed {
		if c {
			n++
		}
	}
	assert.Equal(t, 1, n, "exactly one completion changed the record")

	d, err := st.TransactionDetail(ctx, m.ID, sika.EnvironmentTest, tx.ID)
	require.NoError(t, err)
	assert.Equal(t, sika.StatusSuccess, d.Status)
	require.Len(t, d.StatusLogs, 2)
	assert.Nil(t, d.StatusLogs[0].FromStatus)
	assert.Equal(t, sika.StatusPending, *d.StatusLogs[1].FromStatus)
	assert.Equal(t, sika.TriggerSystem, d.StatusLogs[1].TriggeredBy)

	wallets, count, err := st.ListWallets(ctx, m.ID, sika.EnvironmentTest, store.PageRequest{Page: 1, PageSize: 10})
	require.NoError(t, err)
	require.Equal(t, 1, count)
	assert.Equal(t, "985.00", sika.FormatAmount(wallets[0].AvailableAmount.Decimal), "credited once")

	// A failure after success, or a completion of another run, changes nothing.
	failed := success(tx)
	failed.Status = sika.StatusFailed
	_, c, err := st.CompletePayment(ctx, failed)
	require.NoError(t, err)
	assert.False(t, c)
	other := newPayment(t, m, "10")
	stale := success(other)
	stale.Run = 2
	_, c, err = st.CompletePayment(ctx, stale)
	require.NoError(t, err)
	assert.False(t, c, "a completion of a run that is not the transaction's current run is ignored")
	disc, err := st.CheckLedger(ctx)
	require.NoError(t, err)
	assert.Nil(t, disc)
}

func TestConcurrentCreditsKeepTheLedgerChained(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	const n = 40
	txs := make([]sika.Transaction, n)
	for i := range txs {
		txs[i] = newPayment(t, m, "100")
	}
	var wg sync.WaitGroup
	for _, tx := range txs {
		wg.Add(1)
		go func(tx sika.Transaction) {
			defer wg.Done()
			_, _, err := st.CompletePayment(context.WithoutCancel(ctx), success(tx))
			assert.NoError(t, err)
		}(tx)
	}
	wg.Wait()
	wallets, _, err := st.ListWallets(ctx, m.ID, sika.EnvironmentTest, store.PageRequest{Page: 1, PageSize: 10})
	require.NoError(t, err)
	require.Len(t, wallets, 1)
	assert.Equal(t, "4000.00", sika.FormatAmount(wallets[0].AvailableAmount.Decimal))

	entries, more, err := st.ListLedgerEntries(ctx, m.ID, sika.EnvironmentTest, store.KeysetRequest{Limit: 100})
	require.NoError(t, err)
	assert.False(t, more)
	require.Len(t, entries, n)
	disc, err := st.CheckLedger(ctx)
	require.NoError(t, err)
	assert.Nil(t, disc, "every wallet equals its ledger and each entry continues the previous one")

	// The ledger is append-only.
	_, err = st.Pool().Exec(ctx, `UPDATE ledger_entries SET amount = 1 WHERE id = $1`, entries[0].ID)
	assert.Error(t, err)
	_, err = st.Pool().Exec(ctx, `DELETE FROM transaction_status_logs WHERE transaction_id = $1`, txs[0].ID)
	assert.Error(t, err)
}

func TestCheckLedgerFindsADiscrepancy(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	tx := newPayment(t, m, "50")
	_, _, err := st.CompletePayment(ctx, success(tx))
	require.NoError(t, err)
	_, err = st.Pool().Exec(ctx, `UPDATE wallets SET available_amount = available_amount + 1 WHERE merchant_id = $1`, m.ID)
	require.NoError(t, err)
	disc, err := st.CheckLedger(ctx)
	require.NoError(t, err)
	require.NotNil(t, disc)
	assert.Contains(t, disc.Problem, "ledger sums to")
	_, err = st.Pool().Exec(ctx, `UPDATE wallets SET available_amount = available_amount - 1 WHERE merchant_id = $1`, m.ID)
	require.NoError(t, err)
}

// paymentStart is the outbox row of a payment's run, as the API's retry writes it.
func paymentStart(t sika.Transaction) store.WorkflowStart {
	return store.WorkflowStart{ID: "payment:" + t.ID.String(), Type: "Payment", Input: t.Run}
}

func TestRetryPayment(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	tx := newPayment(t, m, "75")
	start := paymentStart
	_, _, err := st.RetryPayment(ctx, m.ID, sika.EnvironmentTest, tx.ID, store.RetryKey{}, nil, "", nil, start)
	assert.Equal(t, sika.CodeNotFailed, sika.ErrorCode(err), "a PENDING payment is not retried")
	failed := success(tx)
	failed.Status = sika.StatusFailed
	failed.Attempt.FailureCode = "payer_declined"
	_, _, err = st.CompletePayment(ctx, failed)
	require.NoError(t, err)
	other := newMerchant(t)
	_, _, err = st.RetryPayment(ctx, other.ID, sika.EnvironmentTest, tx.ID, store.RetryKey{}, nil, "", nil, start)
	assert.Equal(t, sika.CodeNotFound, sika.ErrorCode(err), "another merchant's payment")

	retried, outbox, err := st.RetryPayment(ctx, m.ID, sika.EnvironmentTest, tx.ID, store.RetryKey{}, nil, "+2250707000999", nil, start)
	require.NoError(t, err)
	assert.NotZero(t, outbox)
	assert.Equal(t, 2, retried.Run)
	assert.Equal(t, sika.StatusPending, retried.Status)
	assert.Empty(t, retried.FailureCode)
	assert.Equal(t, "+2250707000999", retried.CustomerPhone)
	var pendings []string
	rows, err := st.Pool().Query(ctx, `SELECT payload->'data'->>'status' FROM events WHERE transaction_id = $1 AND type = 'transaction.pending'
		ORDER BY created_at`, tx.ID)
	require.NoError(t, err)
	for rows.Next() {
		var status string
		require.NoError(t, rows.Scan(&status))
		pendings = append(pendings, status)
	}
	require.NoError(t, rows.Err())
	assert.Equal(t, []string{"PENDING", "PENDING"}, pendings, "transaction.pending at the start and again at the retry")
	_, c, err := st.CompletePayment(ctx, success(tx))
	require.NoError(t, err)
	assert.False(t, c, "run 1 can no longer complete")
	s2 := success(tx)
	s2.Run = 2
	_, c, err = st.CompletePayment(ctx, s2)
	require.NoError(t, err)
	assert.True(t, c)
}

// A retry's Idempotency-Key starts one run, however often its request runs: the idempotency
// layer hands a key whose request died after the commit (before the response was stored) to the
// next request once the lease has passed, and that request finds the run the first one started,
// even when that run has failed again meanwhile (found by make chaos: one key, two runs).
func TestRetryPaymentOncePerKey(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	tx := newPayment(t, m, "75")
	start := paymentStart
	fail := func(run int) {
		t.Helper()
		failed := success(tx)
		failed.Run = run
		failed.Status = sika.StatusFailed
		failed.Attempt.FailureCode = "payer_declined"
		_, c, err := st.CompletePayment(ctx, failed)
		require.NoError(t, err)
		require.True(t, c)
	}
	fail(1)
	key := store.RetryKey{Key: "retry-" + uuid.NewString(), Fingerprint: []byte("the request's hash")}
	retried, outbox, err := st.RetryPayment(ctx, m.ID, sika.EnvironmentTest, tx.ID, key, nil, "", nil, start)
	require.NoError(t, err)
	require.NotZero(t, outbox)
	require.Equal(t, 2, retried.Run)

	done, err := st.RetriedWithKey(ctx, tx.ID, key)
	require.NoError(t, err)
	assert.True(t, done, "the key is recorded with its run")
	fail(2) // the run the first request started fails before its request is taken over

	again, outbox, err := st.RetryPayment(ctx, m.ID, sika.EnvironmentTest, tx.ID, key, nil, "", nil, start)
	require.ErrorIs(t, err, store.ErrRetriedWithKey)
	assert.Zero(t, outbox, "no outbox row: nothing started again")
	assert.Equal(t, 2, again.Run)
	assert.Equal(t, sika.StatusFailed, again.Status, "the payment as it stands")

	other := store.RetryKey{Key: key.Key, Fingerprint: []byte("another body")}
	_, err = st.RetriedWithKey(ctx, tx.ID, other)
	assert.Equal(t, sika.CodeIdempotencyKeyReused, sika.ErrorCode(err), "%v", err)
	_, _, err = st.RetryPayment(ctx, m.ID, sika.EnvironmentTest, tx.ID, other, nil, "", nil, start)
	assert.Equal(t, sika.CodeIdempotencyKeyReused, sika.ErrorCode(err), "%v", err)

	third, _, err := st.RetryPayment(ctx, m.ID, sika.EnvironmentTest, tx.ID, store.RetryKey{Key: "retry-" + uuid.NewString()}, nil, "", nil, start)
	require.NoError(t, err, "another key retries again")
	assert.Equal(t, 3, third.Run)
	fresh, err := st.Transaction(ctx, tx.ID)
	require.NoError(t, err)
	assert.Equal(t, 3, fresh.Run)
}

// Requests holding one retry key at once (a claim taken over while its first request still
// commits) start one run between them: the key is read under the transaction's lock.
func TestRetryPaymentOncePerKeyUnderConcurrency(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	tx := newPayment(t, m, "75")
	failed := success(tx)
	failed.Status = sika.StatusFailed
	failed.Attempt.FailureCode = "payer_declined"
	_, _, err := st.CompletePayment(ctx, failed)
	require.NoError(t, err)
	outboxRows := func() int {
		t.Helper()
		var n int
		require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM workflow_outbox WHERE workflow_id = $1`, "payment:"+tx.ID.String()).Scan(&n))
		return n
	}
	before := outboxRows()
	key := store.RetryKey{Key: "retry-" + uuid.NewString(), Fingerprint: []byte("the request's hash")}
	const requests = 6
	errs := make([]error, requests)
	var wg sync.WaitGroup
	for i := range requests {
		wg.Go(func() {
			_, _, errs[i] = st.RetryPayment(ctx, m.ID, sika.EnvironmentTest, tx.ID, key, nil, "", nil, paymentStart)
		})
	}
	wg.Wait()
	started := 0
	for _, err := range errs {
		if err == nil {
			started++
			continue
		}
		assert.ErrorIs(t, err, store.ErrRetriedWithKey)
	}
	assert.Equal(t, 1, started, "one request starts the run")
	fresh, err := st.Transaction(ctx, tx.ID)
	require.NoError(t, err)
	assert.Equal(t, 2, fresh.Run)
	assert.Equal(t, before+1, outboxRows(), "one run's outbox row")
}

// TestStartAttemptRecordsOnceUnderConcurrency: workers recording the same attempt at once (a
// retried activity, a restarted worker) leave one row, and each gets that attempt with its
// transaction; a call that finds the first insert not yet visible answers not_found and its
// retry finds the row, as the activity's retry does.
func TestStartAttemptRecordsOnceUnderConcurrency(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	tx := newPayment(t, m, "500")
	want := sika.TransactionAttempt{ID: uuid.New(), Run: 1, Sequence: 1, Gateway: "sandbox-a", Priority: 1}
	got := make([]sika.TransactionAttempt, 8)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() {
			for try := 0; ; try++ {
				read, _, a, err := st.StartAttempt(ctx, tx.ID, want)
				if err == nil {
					assert.Equal(t, tx.ID, read.ID)
					got[i] = a
					return
				}
				if try == 50 || sika.ErrorCode(err) != sika.CodeNotFound {
					assert.NoError(t, err)
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
	wg.Wait()
	for _, a := range got {
		assert.Equal(t, want.ID, a.ID)
		assert.Equal(t, sika.AttemptPending, a.Status)
	}
	assert.Equal(t, 1, countRows(t, `SELECT count(*) FROM transaction_attempts WHERE transaction_id = $1`, tx.ID))
}

// TestASignedSuccessRacingTheRunsEndCreditsOnce: the operator's signed success (kept while the
// run decides) and the run's own end on that attempt, many of each at once: one credit, one
// ledger entry, one status log of the end, every kept answer closed, no deadlock.
func TestASignedSuccessRacingTheRunsEndCreditsOnce(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	tx := newPayment(t, m, "640")
	a := newAttempt(t, tx, 1, 1)
	end := success(tx)
	end.Attempt = store.AttemptUpdate{ID: a.ID, Status: sika.AttemptSuccess, GatewayReference: "op-9"}
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			_, _, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a.ID, GatewayReference: "op-9",
				Source: "signed callback", Gateway: a.Gateway})
			assert.NoError(t, err)
		})
		wg.Go(func() {
			_, _, err := st.CompletePayment(ctx, end)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	assert.Equal(t, "640.00", available(t, m), "credited once")
	assert.Equal(t, 1, countRows(t, `SELECT count(*) FROM ledger_entries WHERE transaction_id = $1`, tx.ID))
	assert.Equal(t, 2, countRows(t, `SELECT count(*) FROM transaction_status_logs WHERE transaction_id = $1`, tx.ID))
	assert.Equal(t, 0, countRows(t, `SELECT count(*) FROM operator_answers WHERE transaction_id = $1 AND processed_at IS NULL`, tx.ID),
		"every kept answer is closed by the run's end")
	_, _, err := st.ReconcileSuccess(ctx, store.LateSuccess{AttemptID: a.ID, Source: "signed callback", Gateway: "sandbox-b"})
	assert.ErrorIs(t, err, store.ErrAnotherGatewaysAttempt, "another gateway's report about the attempt changes nothing")
	disc, err := st.CheckLedger(ctx)
	require.NoError(t, err)
	assert.Nil(t, disc)
}
