package store_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// fundedMerchant is a merchant whose TEST CI wallet holds amount, credited by a completed
// collection.
func fundedMerchant(t *testing.T, amount string) sika.Merchant {
	t.Helper()
	m := newMerchant(t)
	_, changed, err := st.CompletePayment(t.Context(), success(newPayment(t, m, amount)))
	require.NoError(t, err)
	require.True(t, changed)
	return m
}

// outbound is a new RETRAIT (or TRANSFERT) transaction of amount from the merchant's CI wallet.
func outbound(t *testing.T, m sika.Merchant, typ sika.TransactionType, amount string) sika.Transaction {
	t.Helper()
	n, err := st.NetworkByCode(t.Context(), "MTN_CI")
	require.NoError(t, err)
	id, err := uuid.NewV7()
	require.NoError(t, err)
	ref, err := sika.NewReference("OUT", n.CreatedAt)
	require.NoError(t, err)
	a := sika.NewAmount(decimal.RequireFromString(amount))
	return sika.Transaction{
		ID: id, Reference: ref, Merchant: m.ID, Environment: sika.EnvironmentTest, Type: typ,
		RequestedAmount: a, DebitedAmount: a, NetAmount: a, Currency: "XOF", Country: "CI",
		NetworkID: n.ID, Network: n.Code, Recipient: "+2250707000123", FeeChargeMode: sika.FeeDeducted,
	}
}

func payoutStart(tx sika.Transaction) store.WorkflowStart {
	return store.WorkflowStart{ID: "payout:" + tx.ID.String(), Type: "Payout", Input: map[string]any{"x": 1}}
}

func transactionCount(t *testing.T, m sika.Merchant) int {
	t.Helper()
	var n int
	require.NoError(t, st.Pool().QueryRow(t.Context(), `SELECT count(*) FROM transactions WHERE merchant_id = $1`, m.ID).Scan(&n))
	return n
}

// TestIdempotencyKeyBackstopComparesTheRequest: the transactions' own unique idempotency key
// (the backstop under the API's idempotency layer, which still holds once the API's record of
// the key is gone) answers the existing transaction to the same request only; another request
// with the key is idempotency_key_reused, never the old transaction (issue 17).
func TestIdempotencyKeyBackstopComparesTheRequest(t *testing.T) {
	ctx := t.Context()
	fpA, fpB := []byte("fingerprint of request A"), []byte("fingerprint of request B")

	t.Run("payout", func(t *testing.T) {
		m := fundedMerchant(t, "5000")
		key := uuid.NewString()
		first := outbound(t, m, sika.TypePayout, "1000")
		created, outbox, ok, err := st.CreatePayout(ctx, store.NewTransaction{Transaction: first, IdempotencyKey: key, Fingerprint: fpA}, payoutStart(first))
		require.NoError(t, err)
		require.True(t, ok)
		require.NotZero(t, outbox)

		again := outbound(t, m, sika.TypePayout, "1000")
		got, _, ok, err := st.CreatePayout(ctx, store.NewTransaction{Transaction: again, IdempotencyKey: key, Fingerprint: fpA}, payoutStart(again))
		require.NoError(t, err)
		assert.False(t, ok, "the same request creates nothing")
		assert.Equal(t, created.ID, got.ID, "the same request gets the first payout")

		other := outbound(t, m, sika.TypePayout, "2500")
		_, _, ok, err = st.CreatePayout(ctx, store.NewTransaction{Transaction: other, IdempotencyKey: key, Fingerprint: fpB}, payoutStart(other))
		require.Error(t, err)
		assert.False(t, ok)
		assert.Equal(t, sika.CodeIdempotencyKeyReused, sika.ErrorCode(err), "%v", err)
		assert.Contains(t, err.Error(), created.Reference)

		assert.Equal(t, 2, transactionCount(t, m), "the funding and one payout")
		wallets, _, err := st.ListWallets(ctx, m.ID, sika.EnvironmentTest, store.PageRequest{Page: 1, PageSize: 10})
		require.NoError(t, err)
		require.Len(t, wallets, 1)
		assert.Equal(t, "4000.00", sika.FormatAmount(wallets[0].AvailableAmount.Decimal), "held once")
	})

	t.Run("payment", func(t *testing.T) {
		m := newMerchant(t)
		key := uuid.NewString()
		create := func(amount string, fp []byte) (sika.Transaction, bool, error) {
			tx := outbound(t, m, sika.TypePayment, amount)
			tx.Recipient, tx.CustomerPhone = "", "+2250707000123"
			got, _, ok, err := st.CreateTransaction(ctx, store.NewTransaction{Transaction: tx, IdempotencyKey: key, Fingerprint: fp},
				store.WorkflowStart{ID: "payment:" + tx.ID.String(), Type: "Payment", Input: map[string]any{"x": 1}})
			return got, ok, err
		}
		created, ok, err := create("1000", fpA)
		require.NoError(t, err)
		require.True(t, ok)
		got, ok, err := create("1000", fpA)
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Equal(t, created.ID, got.ID)
		_, ok, err = create("1500", fpB)
		assert.False(t, ok)
		assert.Equal(t, sika.CodeIdempotencyKeyReused, sika.ErrorCode(err), "%v", err)
		assert.Equal(t, 1, transactionCount(t, m))
	})

	t.Run("a row without a fingerprint keeps answering the existing transaction", func(t *testing.T) {
		m := fundedMerchant(t, "5000")
		key := uuid.NewString()
		first := outbound(t, m, sika.TypePayout, "1000")
		created, _, ok, err := st.CreatePayout(ctx, store.NewTransaction{Transaction: first, IdempotencyKey: key, Fingerprint: fpA}, payoutStart(first))
		require.NoError(t, err)
		require.True(t, ok)
		// As written before migration 0012.
		_, err = st.Pool().Exec(ctx, `UPDATE transactions SET idempotency_fingerprint = NULL WHERE id = $1`, created.ID)
		require.NoError(t, err)
		other := outbound(t, m, sika.TypePayout, "2500")
		got, _, ok, err := st.CreatePayout(ctx, store.NewTransaction{Transaction: other, IdempotencyKey: key, Fingerprint: fpB}, payoutStart(other))
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Equal(t, created.ID, got.ID)
	})

	t.Run("settlement: the same request gets its settlement, another one 409, never 404", func(t *testing.T) {
		m := fundedMerchant(t, "5000")
		n, err := st.NetworkByCode(ctx, "MTN_CI")
		require.NoError(t, err)
		phone := "+2250707000123"
		method, err := st.CreatePayoutMethod(ctx, sika.PayoutMethod{Merchant: m.ID, Environment: sika.EnvironmentTest,
			Type: sika.PayoutMobileMoney, Label: "Owner", Network: &n.ID, PhoneNumber: &phone})
		require.NoError(t, err)
		settle := func(key, amount string, fp []byte) (sika.Settlement, bool, error) {
			tx := outbound(t, m, sika.TypePayout, amount)
			return st.CreateSettlement(ctx, store.NewTransaction{Transaction: tx, IdempotencyKey: key, Fingerprint: fp},
				uuid.Must(uuid.NewV7()), method.ID, payoutStart(tx))
		}
		key := uuid.NewString()
		first, ok, err := settle(key, "1000", fpA)
		require.NoError(t, err)
		require.True(t, ok)
		again, ok, err := settle(key, "1000", fpA)
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Equal(t, first.ID, again.ID)
		_, ok, err = settle(key, "2000", fpB)
		assert.False(t, ok)
		assert.Equal(t, sika.CodeIdempotencyKeyReused, sika.ErrorCode(err), "%v", err)

		// A key that holds a payout without a fingerprint (written before migration 0012):
		// the settlement cannot be that payout, so the key is reused, not "not found".
		payoutKey := uuid.NewString()
		p := outbound(t, m, sika.TypePayout, "500")
		payout, _, ok, err := st.CreatePayout(ctx, store.NewTransaction{Transaction: p, IdempotencyKey: payoutKey}, payoutStart(p))
		require.NoError(t, err)
		require.True(t, ok)
		require.Nil(t, fingerprintOf(t, payout.ID))
		_, ok, err = settle(payoutKey, "500", fpA)
		assert.False(t, ok)
		assert.Equal(t, sika.CodeIdempotencyKeyReused, sika.ErrorCode(err), "%v", err)
	})

	t.Run("wallet transfer", func(t *testing.T) {
		m := fundedMerchant(t, "5000")
		transfer := func(key, amount string, fp []byte) (sika.WalletTransfer, bool, error) {
			tx := outbound(t, m, sika.TypeTransfer, amount)
			tx.NetworkID, tx.Network, tx.Recipient = uuid.Nil, "", "SN"
			return st.CreateWalletTransfer(ctx, store.NewWalletTransfer{
				Transaction: store.NewTransaction{Transaction: tx, IdempotencyKey: key, Fingerprint: fp},
				ID:          uuid.Must(uuid.NewV7()), ToCountry: "SN", ToCurrency: "XOF",
			})
		}
		key := uuid.NewString()
		first, ok, err := transfer(key, "1000", fpA)
		require.NoError(t, err)
		require.True(t, ok)
		again, ok, err := transfer(key, "1000", fpA)
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Equal(t, first.ID, again.ID)
		_, ok, err = transfer(key, "3000", fpB)
		assert.False(t, ok)
		assert.Equal(t, sika.CodeIdempotencyKeyReused, sika.ErrorCode(err), "%v", err)
	})
}

func fingerprintOf(t *testing.T, id uuid.UUID) []byte {
	t.Helper()
	var fp []byte
	require.NoError(t, st.Pool().QueryRow(t.Context(), `SELECT idempotency_fingerprint FROM transactions WHERE id = $1`, id).Scan(&fp))
	return fp
}
