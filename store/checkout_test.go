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
	"github.com/sikahq/sika/internal/devstack"
	"github.com/sikahq/sika/internal/testenv"
	"github.com/sikahq/sika/store"
)

// newCheckoutSession creates a PENDING session of 1000 XOF for a merchant, expiring in an hour.
func newCheckoutSession(t *testing.T, s *store.Store, m sika.Merchant) sika.CheckoutSession {
	t.Helper()
	id, err := uuid.NewV7()
	require.NoError(t, err)
	expires := time.Now().Add(time.Hour)
	c, _, err := s.CreateCheckoutSession(t.Context(), sika.CheckoutSession{
		ID: id, Merchant: m.ID, Environment: sika.EnvironmentTest, Slug: "cs_" + id.String(),
		CheckoutURL: "https://pay.example.com/pay/cs_" + id.String() + "/", Amount: sika.NewAmount(decimal.NewFromInt(1000)),
		Currency: "XOF", CustomerEmail: "ama@example.com", CustomerName: "Ama Owusu", ExpiresAt: &expires,
	}, func(c sika.CheckoutSession) store.WorkflowStart {
		return store.WorkflowStart{ID: "checkout-expiry:" + c.ID.String(), Type: "CheckoutExpiry", Input: map[string]any{"x": 1}}
	})
	require.NoError(t, err)
	return c
}

// checkoutPayment is a new PENDING payment of a session and the start of its workflow.
func checkoutPayment(t *testing.T, s *store.Store, c sika.CheckoutSession) (store.NewTransaction, store.WorkflowStart) {
	t.Helper()
	n, err := s.NetworkByCode(t.Context(), "MTN_CI")
	require.NoError(t, err)
	id, err := uuid.NewV7()
	require.NoError(t, err)
	ref, err := sika.NewReference("PAY", time.Now())
	require.NoError(t, err)
	tx := sika.Transaction{
		ID: id, Reference: ref, Merchant: c.Merchant, Environment: c.Environment, Type: sika.TypePayment,
		RequestedAmount: c.Amount, DebitedAmount: c.Amount, NetAmount: c.Amount, Currency: c.Currency, Country: "CI",
		NetworkID: n.ID, Network: n.Code, CustomerPhone: "+2250707000123", CustomerName: c.CustomerName,
		FeeChargeMode: sika.FeeDeducted, CheckoutSession: &c.ID,
	}
	return store.NewTransaction{Transaction: tx, Reason: "Payment requested on the checkout page"},
		store.WorkflowStart{ID: "payment:" + id.String(), Type: "Payment", Input: map[string]any{"x": 1}}
}

// TestOneCheckoutPaymentInFlight starts N payments of one session at once: Postgres lets one
// through, every other one answers 409 checkout_payment_in_progress and leaves nothing behind;
// once the payment in flight has failed, the session takes a new one.
func TestOneCheckoutPaymentInFlight(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	c := newCheckoutSession(t, st, m)

	const n = 16
	ids := make([]uuid.UUID, n)
	workflows := make([]string, n)
	created := make([]sika.Transaction, n)
	outboxes := make([]int64, n)
	errs := make([]error, n)
	starts := make([]store.WorkflowStart, n)
	payments := make([]store.NewTransaction, n)
	for i := range n {
		payments[i], starts[i] = checkoutPayment(t, st, c)
		ids[i], workflows[i] = payments[i].ID, starts[i].ID
	}
	ready := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-ready
			created[i], outboxes[i], errs[i] = st.CreateCheckoutPayment(ctx, payments[i], starts[i], time.Now())
		})
	}
	close(ready)
	wg.Wait()

	winner := -1
	for i, err := range errs {
		if err == nil {
			require.Equal(t, -1, winner, "two payments of one session were created: %d and %d", winner, i)
			winner = i
			continue
		}
		assert.Equal(t, sika.CodePaymentInProgress, sika.ErrorCode(err), "payment %d: %v", i, err)
	}
	require.NotEqual(t, -1, winner, "one payment is created")
	assert.Equal(t, ids[winner], created[winner].ID)
	assert.Equal(t, sika.StatusPending, created[winner].Status)
	assert.NotZero(t, outboxes[winner])
	losers := append(append([]uuid.UUID{}, ids[:winner]...), ids[winner+1:]...)
	loserWorkflows := append(append([]string{}, workflows[:winner]...), workflows[winner+1:]...)

	count := func(query string, args ...any) int {
		t.Helper()
		var k int
		require.NoError(t, st.Pool().QueryRow(ctx, query, args...).Scan(&k))
		return k
	}
	assert.Equal(t, 1, count(`SELECT count(*) FROM transactions WHERE checkout_session_id = $1`, c.ID))
	assert.Equal(t, 1, count(`SELECT count(*) FROM transactions WHERE merchant_id = $1`, m.ID))
	assert.Zero(t, count(`SELECT count(*) FROM transactions WHERE id = ANY($1)`, losers))
	assert.Equal(t, 1, count(`SELECT count(*) FROM transaction_status_logs WHERE merchant_id = $1`, m.ID), "the winner's first status log only")
	assert.Zero(t, count(`SELECT count(*) FROM transaction_status_logs WHERE transaction_id = ANY($1)`, losers))
	assert.Zero(t, count(`SELECT count(*) FROM workflow_outbox WHERE workflow_id = ANY($1)`, loserWorkflows), "no workflow start of a refused payment")
	assert.Equal(t, 1, count(`SELECT count(*) FROM workflow_outbox WHERE workflow_id = $1`, workflows[winner]))
	assert.Zero(t, count(`SELECT count(*) FROM events WHERE transaction_id = ANY($1)`, losers))
	assert.Zero(t, count(`SELECT count(*) FROM events WHERE merchant_id = $1 AND transaction_id IS DISTINCT FROM $2`, m.ID, ids[winner]),
		"every event of the merchant is the winner's")
	got, err := st.CheckoutSession(ctx, c.ID)
	require.NoError(t, err)
	assert.Equal(t, sika.CheckoutPending, got.Status, "the session still waits for the payment's outcome")

	// One more while it is in flight: refused too.
	again, start := checkoutPayment(t, st, c)
	_, _, err = st.CreateCheckoutPayment(ctx, again, start, time.Now())
	assert.Equal(t, sika.CodePaymentInProgress, sika.ErrorCode(err))

	// The payment in flight fails: the session takes a new one, and only one.
	_, err = st.Pool().Exec(ctx, `UPDATE transactions SET status = 'FAILED', completed_at = now() WHERE id = $1`, ids[winner])
	require.NoError(t, err)
	next, start := checkoutPayment(t, st, c)
	second, outbox, err := st.CreateCheckoutPayment(ctx, next, start, time.Now())
	require.NoError(t, err, "a session whose payment failed can be paid again")
	assert.Equal(t, sika.StatusPending, second.Status)
	assert.NotZero(t, outbox)
	other, start := checkoutPayment(t, st, c)
	_, _, err = st.CreateCheckoutPayment(ctx, other, start, time.Now())
	assert.Equal(t, sika.CodePaymentInProgress, sika.ErrorCode(err), "and again one at a time")
	assert.Equal(t, 2, count(`SELECT count(*) FROM transactions WHERE checkout_session_id = $1`, c.ID))

	// Another session is not concerned.
	free := newCheckoutSession(t, st, m)
	p, start := checkoutPayment(t, st, free)
	_, _, err = st.CreateCheckoutPayment(ctx, p, start, time.Now())
	assert.NoError(t, err)
}

// TestCheckoutPaymentInFlightOnAClosedSession: a session cancelled while its payment is still
// in flight answers session_not_payable (why it cannot be paid), not that a payment is running.
func TestCheckoutPaymentInFlightOnAClosedSession(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	c := newCheckoutSession(t, st, m)
	p, start := checkoutPayment(t, st, c)
	_, _, err := st.CreateCheckoutPayment(ctx, p, start, time.Now())
	require.NoError(t, err)
	_, err = st.CancelCheckoutSession(ctx, m.ID, sika.EnvironmentTest, c.ID)
	require.NoError(t, err)
	again, start := checkoutPayment(t, st, c)
	_, _, err = st.CreateCheckoutPayment(ctx, again, start, time.Now())
	assert.Equal(t, sika.CodeSessionNotPayable, sika.ErrorCode(err), "%v", err)
}

// TestCheckoutInFlightMigrationOnEarlierDuplicates applies migration 0013 to a database that
// already holds two PENDING payments of one session (made before the rule): it applies, leaves
// both payments as they are, and enforces the rule for every new payment.
func TestCheckoutInFlightMigrationOnEarlierDuplicates(t *testing.T) {
	ctx := t.Context()
	env := testenv.Current()
	name := "sika_in_flight_" + uuid.NewString()[:8]
	require.NoError(t, devstack.CreateDatabase(ctx, env.AdminURL, name))
	t.Cleanup(func() { _ = devstack.DropDatabase(context.Background(), env.AdminURL, name) })
	url, err := devstack.DatabaseURL(env.AdminURL, name)
	require.NoError(t, err)
	s, err := store.Open(ctx, url)
	require.NoError(t, err)
	defer s.Close()
	_, err = s.Migrate(ctx)
	require.NoError(t, err)

	// The database as it was before 0013, with the bug's outcome in it.
	_, err = s.Pool().Exec(ctx, `DROP INDEX transactions_checkout_in_flight;
		DELETE FROM schema_migrations WHERE name = '0013_checkout_in_flight'`)
	require.NoError(t, err)
	_, m, err := s.RegisterMember(ctx, uuid.NewString()+"@example.com", "x", "T", "", &store.NewMerchant{Name: "Shop", Country: "CI"})
	require.NoError(t, err)
	c := newCheckoutSession(t, s, *m)
	var earlier []uuid.UUID
	for range 3 {
		p, start := checkoutPayment(t, s, c)
		_, _, err := s.CreateCheckoutPayment(ctx, p, start, time.Now())
		require.NoError(t, err, "before 0013 nothing stops a second payment")
		earlier = append(earlier, p.ID)
	}
	clean := newCheckoutSession(t, s, *m)

	applied, err := s.Migrate(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"0013_checkout_in_flight"}, applied)
	var pending int
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT count(*) FROM transactions WHERE id = ANY($1) AND status = 'PENDING'`, earlier).Scan(&pending))
	assert.Equal(t, 3, pending, "the payments made before the rule are left as they are")
	var def string
	require.NoError(t, s.Pool().QueryRow(ctx, `SELECT pg_get_indexdef('transactions_checkout_in_flight'::regclass)`).Scan(&def))
	for _, id := range earlier[1:] {
		assert.Contains(t, def, id.String(), "the later ones are left out of the index")
	}
	assert.NotContains(t, def, earlier[0].String(), "the oldest one stays in the index")

	p, start := checkoutPayment(t, s, c)
	_, _, err = s.CreateCheckoutPayment(ctx, p, start, time.Now())
	assert.Equal(t, sika.CodePaymentInProgress, sika.ErrorCode(err), "the session with earlier payments in flight takes no new one")
	for i := range 2 {
		p, start := checkoutPayment(t, s, clean)
		_, _, err = s.CreateCheckoutPayment(ctx, p, start, time.Now())
		if i == 0 {
			assert.NoError(t, err)
		} else {
			assert.Equal(t, sika.CodePaymentInProgress, sika.ErrorCode(err), "payment %d of a clean session", i)
		}
	}
}

// TestCheckoutRetryRacesNewPayments: the merchant retries a session's failed payment while
// customers start new ones on the same session. Whatever the interleaving, nobody deadlocks or
// gets a 500: exactly one payment is in flight, every other call answers 409
// checkout_payment_in_progress (found by make chaos: the retry took the session lock and the
// in-flight index in the order opposite to a new payment's).
func TestCheckoutRetryRacesNewPayments(t *testing.T) {
	ctx := context.WithoutCancel(t.Context())
	for round := range 10 {
		m := newMerchant(t)
		c := newCheckoutSession(t, st, m)
		nt, start := checkoutPayment(t, st, c)
		failed, _, err := st.CreateCheckoutPayment(ctx, nt, start, time.Now())
		require.NoError(t, err)
		_, _, err = st.CompletePayment(ctx, store.Completion{TransactionID: failed.ID, Run: 1, Status: sika.StatusFailed,
			Reason: "declined", TriggeredBy: sika.TriggerSystem, Attempt: store.AttemptUpdate{FailureCode: "payer_declined"}})
		require.NoError(t, err)

		const n = 6
		errs := make([]error, n)
		ready := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				<-ready
				if i == 0 {
					_, _, errs[i] = st.RetryPayment(ctx, m.ID, sika.EnvironmentTest, failed.ID, store.RetryKey{}, nil, "", nil, func(tx sika.Transaction) store.WorkflowStart {
						return store.WorkflowStart{ID: "payment:" + tx.ID.String(), Type: "Payment", Input: tx.Run}
					})
					return
				}
				nt, start := checkoutPayment(t, st, c)
				_, _, errs[i] = st.CreateCheckoutPayment(ctx, nt, start, time.Now())
			})
		}
		close(ready)
		wg.Wait()
		ok := 0
		for i, err := range errs {
			if err == nil {
				ok++
				continue
			}
			assert.Equal(t, sika.CodePaymentInProgress, sika.ErrorCode(err), "round %d call %d: %v", round, i, err)
		}
		assert.Equal(t, 1, ok, "round %d: one payment in flight", round)
	}
}
