package store_test

import (
	"fmt"
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

// newBatch records a batch of n payouts of amount XOF (fee inside) from m's CI wallet.
func newBatch(t *testing.T, m sika.Merchant, n int, amount string, status sika.PayoutBatchStatus, expires *time.Time) (sika.PayoutBatch, error) {
	t.Helper()
	ctx := t.Context()
	nw, err := st.NetworkByCode(ctx, "MTN_CI")
	require.NoError(t, err)
	id, err := uuid.NewV7()
	require.NoError(t, err)
	ref, err := sika.NewReference("BAT", time.Now())
	require.NoError(t, err)
	a := decimal.RequireFromString(amount)
	fee := a.Div(decimal.NewFromInt(100)).Round(0)
	items := make([]sika.PayoutBatchItem, n)
	for i := range items {
		items[i] = sika.PayoutBatchItem{Index: i, Reference: fmt.Sprintf("item-%d", i), RequestedAmount: sika.NewAmount(a),
			ClientFee: sika.NewAmount(fee), GatewayFee: sika.NewAmount(fee), DebitedAmount: sika.NewAmount(a),
			NetAmount: sika.NewAmount(a.Sub(fee)), FeeChargeMode: sika.FeeDeducted, Currency: "XOF", Country: "CI",
			NetworkID: nw.ID, Network: nw.Code, Phone: fmt.Sprintf("+22507070%05d", i)}
	}
	b, _, _, err := st.CreatePayoutBatch(ctx, store.NewPayoutBatch{
		Batch: sika.PayoutBatch{ID: id, Reference: ref, Merchant: m.ID, Environment: sika.EnvironmentTest, Status: status,
			ApprovalExpiresAt: expires, CreatedByMember: nil, CreatedByAPIKey: apiKeyOf(t, m)},
		Items: items,
	}, store.WorkflowStart{ID: "payout-batch:" + id.String(), Type: "PayoutBatch", Input: map[string]any{"x": 1}})
	return b, err
}

func apiKeyOf(t *testing.T, m sika.Merchant) *uuid.UUID {
	t.Helper()
	k, err := st.CreateAPIKey(t.Context(), m.ID, sika.EnvironmentTest, sika.ScopePayout, "batches", nil)
	require.NoError(t, err)
	return &k.ID
}

// ciWallet is the merchant's CI wallet figures.
func ciWallet(t *testing.T, m sika.Merchant) (available, pending string) {
	t.Helper()
	var a, p decimal.Decimal
	require.NoError(t, st.Pool().QueryRow(t.Context(), `SELECT available_amount, pending_amount FROM wallets
		WHERE merchant_id = $1 AND environment = 'TEST' AND country = 'CI'`, m.ID).Scan(&a, &p))
	return a.StringFixed(2), p.StringFixed(2)
}

func requireLedgerBalanced(t *testing.T) {
	t.Helper()
	disc, err := st.CheckLedger(t.Context())
	require.NoError(t, err)
	require.Nil(t, disc)
}

func TestPayoutBatchIsHeldWholeOrRefusedWhole(t *testing.T) {
	m := newMerchant(t)
	paidCollection(t, m, "5000")

	_, err := newBatch(t, m, 3, "2000", sika.BatchProcessing, nil)
	require.Equal(t, sika.CodeInsufficientBalance, sika.ErrorCode(err), "%v", err)
	available, pending := ciWallet(t, m)
	assert.Equal(t, "5000.00", available, "nothing held")
	assert.Equal(t, "0.00", pending)
	var batches int
	require.NoError(t, st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM payout_batches WHERE merchant_id = $1`, m.ID).Scan(&batches))
	assert.Zero(t, batches, "nothing written")

	b, err := newBatch(t, m, 3, "1500", sika.BatchProcessing, nil)
	require.NoError(t, err)
	assert.Equal(t, "4500.00", b.Totals[0].DebitedAmount.StringFixed(2))
	available, pending = ciWallet(t, m)
	assert.Equal(t, "500.00", available, "the hold is the batch's total")
	assert.Equal(t, "4500.00", pending)
	requireLedgerBalanced(t)
}

// TestCancelRacesDispatch sends every item of a batch and cancels it twice, all at once: each
// item ends sent (with its payout transaction and hold) or cancelled (released), never both;
// the wallet holds exactly the items sent; dispatching again changes nothing.
func TestCancelRacesDispatch(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	paidCollection(t, m, "100000")
	const n = 40
	b, err := newBatch(t, m, n, "1000", sika.BatchProcessing, nil)
	require.NoError(t, err)

	var wg sync.WaitGroup
	sent := make([]store.BatchDispatch, n)
	for i := range n {
		wg.Go(func() {
			var err error
			sent[i], err = st.DispatchPayoutBatchItem(ctx, b.ID, i)
			assert.NoError(t, err)
		})
		if i == n/2 {
			for range 2 {
				wg.Go(func() {
					_, err := st.CancelPayoutBatch(ctx, m.ID, sika.EnvironmentTest, b.ID)
					assert.NoError(t, err)
				})
			}
		}
	}
	wg.Wait()

	items, err := st.PayoutBatchItems(ctx, m.ID, sika.EnvironmentTest, b.ID)
	require.NoError(t, err)
	nSent := 0
	for i, it := range items {
		if it.Status == sika.ItemCancelled {
			assert.Nil(t, it.Transaction)
			assert.False(t, sent[i].Sent, "item %d cancelled and sent", i)
			continue
		}
		require.Equal(t, sika.ItemPending, it.Status, "item %d", i)
		require.NotNil(t, it.Transaction)
		assert.Equal(t, *it.Transaction, sent[i].Transaction)
		nSent++
	}
	available, pending := ciWallet(t, m)
	assert.Equal(t, decimal.NewFromInt(int64(100000-1000*nSent)).StringFixed(2), available, "%d sent", nSent)
	assert.Equal(t, decimal.NewFromInt(int64(1000*nSent)).StringFixed(2), pending)
	requireLedgerBalanced(t)

	for i := range n {
		again, err := st.DispatchPayoutBatchItem(ctx, b.ID, i)
		require.NoError(t, err)
		assert.Equal(t, sent[i].Sent, again.Sent)
		assert.Equal(t, sent[i].Transaction, again.Transaction)
		assert.True(t, again.Stop)
	}
	a2, p2 := ciWallet(t, m)
	assert.Equal(t, available, a2)
	assert.Equal(t, pending, p2)

	// The items sent end; the batch then ends CANCELLED with its event.
	for _, it := range items {
		if it.Transaction != nil {
			_, changed, err := st.CompletePayment(ctx, store.Completion{TransactionID: *it.Transaction, Run: 1, Gateway: "sandbox-a",
				Status: sika.StatusSuccess, Reason: "test", TriggeredBy: sika.TriggerSystem})
			require.NoError(t, err)
			require.True(t, changed)
		}
	}
	status, changed, err := st.EndPayoutBatch(ctx, b.ID)
	require.NoError(t, err)
	assert.True(t, changed)
	assert.Equal(t, sika.BatchCancelled, status)
	_, changed, err = st.EndPayoutBatch(ctx, b.ID)
	require.NoError(t, err)
	assert.False(t, changed, "ended once")
	available, pending = ciWallet(t, m)
	assert.Equal(t, decimal.NewFromInt(int64(100000-1000*nSent)).StringFixed(2), available)
	assert.Equal(t, "0.00", pending)
	var events int
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FROM events WHERE merchant_id = $1 AND type = 'payout_batch.completed'`, m.ID).Scan(&events))
	assert.Equal(t, 1, events)
	_, err = st.CancelPayoutBatch(ctx, m.ID, sika.EnvironmentTest, b.ID)
	assert.Equal(t, sika.CodeNotPending, sika.ErrorCode(err))
	requireLedgerBalanced(t)
}

func TestUnapprovedBatchExpiresAndReleases(t *testing.T) {
	ctx := t.Context()
	m := newMerchant(t)
	paidCollection(t, m, "10000")
	later := time.Now().Add(time.Hour)
	b, err := newBatch(t, m, 4, "1000", sika.BatchAwaitingApproval, &later)
	require.NoError(t, err)
	available, pending := ciWallet(t, m)
	assert.Equal(t, "6000.00", available, "what waits holds its money")
	assert.Equal(t, "4000.00", pending)

	st0, err := st.ExpirePayoutBatch(ctx, b.ID)
	require.NoError(t, err)
	assert.Equal(t, sika.BatchAwaitingApproval, st0.Status, "not due yet")
	_, err = st.Pool().Exec(ctx, `UPDATE payout_batches SET approval_expires_at = now() - interval '1 second' WHERE id = $1`, b.ID)
	require.NoError(t, err)
	st1, err := st.ExpirePayoutBatch(ctx, b.ID)
	require.NoError(t, err)
	assert.Equal(t, sika.BatchExpired, st1.Status)
	available, pending = ciWallet(t, m)
	assert.Equal(t, "10000.00", available, "expiry releases it all")
	assert.Equal(t, "0.00", pending)
	d, err := st.DispatchPayoutBatchItem(ctx, b.ID, 0)
	require.NoError(t, err)
	assert.False(t, d.Sent, "an expired batch sends nothing")
	requireLedgerBalanced(t)
}
