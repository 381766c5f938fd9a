package store_test

import (
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

// paidCollection is a collection of amount that succeeded (the wallet credited with it).
func paidCollection(t *testing.T, m sika.Merchant, amount string) sika.Transaction {
	t.Helper()
	p := newPayment(t, m, amount)
	done, changed, err := st.CompletePayment(t.Context(), success(p))
	require.NoError(t, err)
	require.True(t, changed)
	return done
}

// newRefund asks a refund of amount (fee on top) of collection p.
func newRefund(t *testing.T, p sika.Transaction, amount, fee string, key string) (sika.Transaction, error) {
	t.Helper()
	id, err := uuid.NewV7()
	require.NoError(t, err)
	ref, err := sika.NewReference("RFD", time.Now())
	require.NoError(t, err)
	a, f := decimal.RequireFromString(amount), decimal.RequireFromString(fee)
	r := sika.Transaction{ID: id, Reference: ref, Merchant: p.Merchant, Environment: p.Environment, Type: sika.TypeRefund,
		RefundedTransaction: &p.ID, RequestedAmount: sika.NewAmount(a), ClientFee: sika.NewAmount(f), GatewayFee: sika.NewAmount(f),
		DebitedAmount: sika.NewAmount(a.Add(f)), NetAmount: sika.NewAmount(a), Currency: p.Currency, Country: p.Country,
		NetworkID: p.NetworkID, Network: p.Network, Recipient: p.CustomerPhone, FeeChargeMode: sika.FeeAddOn}
	created, _, _, err := st.CreateRefund(t.Context(), store.NewTransaction{Transaction: r, IdempotencyKey: key, RefundVia: store.RefundViaOperator},
		store.WorkflowStart{ID: "refund:" + id.String(), Type: "Refund", Input: map[string]any{"x": 1}})
	return created, err
}

func endRefund(t *testing.T, r sika.Transaction, status sika.TransactionStatus) {
	t.Helper()
	_, changed, err := st.CompletePayment(t.Context(), store.Completion{TransactionID: r.ID, Run: 1, Gateway: "sandbox-a", Status: status,
		Reason: "test", TriggeredBy: sika.TriggerSystem, Attempt: store.AttemptUpdate{FailureCode: "recipient_not_found"}})
	require.NoError(t, err)
	require.True(t, changed)
}

// Fifty partial refunds of one collection asked at once: those accepted never add up to more
// than what the customer paid, each holds its amount and fee, and a failed one gives its share
// back to later refunds. The refunds then end: the collection's amount_refunded is what the
// succeeded ones gave back, never more than it, and the ledger stays chained.
func TestFiftyConcurrentPartialRefundsNeverExceedThePayment(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	p := paidCollection(t, m, "10000")
	paidCollection(t, m, "20000") // enough in the wallet for the fees too

	const n = 50
	var wg sync.WaitGroup
	results := make([]sika.Transaction, n)
	errs := make([]error, n)
	start := time.Now()
	for i := range n {
		wg.Go(func() { results[i], errs[i] = newRefund(t, p, "300", "10", "") })
	}
	wg.Wait()
	elapsed := time.Since(start)
	var accepted []sika.Transaction
	refused := 0
	for i := range n {
		if errs[i] != nil {
			require.Equal(t, sika.CodeRefundExceedsPayment, sika.ErrorCode(errs[i]), "%v", errs[i])
			refused++
			continue
		}
		accepted = append(accepted, results[i])
	}
	t.Logf("50 concurrent refunds of 300 on a 10000 collection: %d accepted (%d held), %d refused, in %s",
		len(accepted), 300*len(accepted), refused, elapsed.Round(time.Millisecond))
	assert.Len(t, accepted, 33, "10000 / 300: 33 refunds fit, the 34th would exceed")
	inFlight, err := st.RefundInFlight(ctx, p.ID)
	require.NoError(t, err)
	assert.Equal(t, "9900.00", sika.FormatAmount(inFlight))
	assert.Equal(t, "19770.00", available(t, m), "30000 less 33 × 310 held")

	// Three fail: their 900 is free again, and a refund of 1000 still does not fit (100 + 900).
	for _, r := range accepted[:3] {
		endRefund(t, r, sika.StatusFailed)
	}
	_, err = newRefund(t, p, "1001", "10", "")
	assert.Equal(t, sika.CodeRefundExceedsPayment, sika.ErrorCode(err), "%v", err)
	last, err := newRefund(t, p, "1000", "10", "")
	require.NoError(t, err, "what failed refunds held is free again")
	_, err = newRefund(t, p, "1", "0", "")
	assert.Equal(t, sika.CodeRefundExceedsPayment, sika.ErrorCode(err), "the collection is all taken")

	for _, r := range append(accepted[3:], last) {
		endRefund(t, r, sika.StatusSuccess)
	}
	got, err := st.TransactionByID(ctx, m.ID, sika.EnvironmentTest, p.ID)
	require.NoError(t, err)
	assert.Equal(t, "10000.00", sika.FormatAmount(got.AmountRefunded.Decimal), "30 × 300 + 1000")
	require.NotNil(t, got.RefundStatus)
	assert.Equal(t, sika.RefundFull, *got.RefundStatus)
	assert.Equal(t, "19690.00", available(t, m), "30000 less 31 refunds succeeded (30 × 310 + 1010)")
	wallets, _, err := st.ListWallets(ctx, m.ID, sika.EnvironmentTest, store.PageRequest{Page: 1, PageSize: 10})
	require.NoError(t, err)
	assert.True(t, wallets[0].PendingAmount.IsZero(), "every hold settled or released")
	disc, err := st.CheckLedger(ctx)
	require.NoError(t, err)
	assert.Nil(t, disc)
	assert.Equal(t, 34, countRows(t, `SELECT count(*) FROM events WHERE type = 'refund.pending' AND merchant_id = $1`, m.ID))
	assert.Equal(t, 31, countRows(t, `SELECT count(*) FROM events WHERE type = 'refund.succeeded' AND merchant_id = $1`, m.ID))
	assert.Equal(t, 3, countRows(t, `SELECT count(*) FROM events WHERE type = 'refund.failed' AND merchant_id = $1`, m.ID))

	list, _, err := st.ListRefunds(ctx, m.ID, sika.EnvironmentTest, store.TransactionFilter{Refunded: &p.ID}, store.KeysetRequest{Limit: 100})
	require.NoError(t, err)
	assert.Len(t, list, 34)
}

// Only a successful collection of the merchant can be refunded; nothing is written otherwise.
func TestRefundOfWhatIsNotASuccessfulCollection(t *testing.T) {
	m := newMerchant(t)
	pending := newPayment(t, m, "500")
	_, err := newRefund(t, pending, "100", "0", "")
	assert.Equal(t, sika.CodeNotRefundable, sika.ErrorCode(err), "%v", err)

	p := paidCollection(t, m, "500")
	r, err := newRefund(t, p, "100", "0", "")
	require.NoError(t, err)
	_, err = newRefund(t, r, "10", "0", "")
	assert.Equal(t, sika.CodeNotRefundable, sika.ErrorCode(err), "a refund is not refundable")

	other := paidCollection(t, newMerchant(t), "500")
	other.Merchant, other.Environment = m.ID, sika.EnvironmentTest
	_, err = newRefund(t, other, "10", "0", "")
	assert.Equal(t, sika.CodeValidation, sika.ErrorCode(err), "another merchant's collection is unknown: %v", err)
	assert.Equal(t, 1, countRows(t, `SELECT count(*) FROM transactions WHERE merchant_id = $1 AND transaction_type = 'REMBOURSEMENT'`, m.ID))
}

// A refund asked again with its idempotency key is the same refund, even once the collection
// is all taken.
func TestRefundIdempotencyKey(t *testing.T) {
	m := newMerchant(t)
	p := paidCollection(t, m, "500")
	first, err := newRefund(t, p, "500", "0", "refund-key-1")
	require.NoError(t, err)
	again, err := newRefund(t, p, "500", "0", "refund-key-1")
	require.NoError(t, err)
	assert.Equal(t, first.ID, again.ID)
	assert.Equal(t, 1, countRows(t, `SELECT count(*) FROM transactions WHERE refunded_transaction_id = $1`, p.ID))
}
