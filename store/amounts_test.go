package store_test

import (
	"io/fs"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/migrations"
	"github.com/sikahq/sika/store"
)

// TestPayoutNetAmountMigration: migration 0020_transactions_net_amount gives the payouts written
// with net_amount = debited_amount (what the wallet loses) the field's one meaning, what the
// beneficiary receives: debited_amount − client_fee (issue 21: a DEDUCTED payout of 831 XOF with
// a 9 XOF fee sent 822 and recorded 831). Payouts without a fee, collections and the ledger are
// left as they are; running it again changes nothing.
func TestPayoutNetAmountMigration(t *testing.T) {
	ctx := t.Context()
	m := fundedMerchant(t, "5000")
	old := outbound(t, m, sika.TypePayout, "831")
	old.ClientFee, old.GatewayFee, old.PlatformFee = sika.NewAmount(decimal.NewFromInt(9)), sika.NewAmount(decimal.NewFromInt(5)), sika.NewAmount(decimal.NewFromInt(4))
	_, _, ok, err := st.CreatePayout(ctx, store.NewTransaction{Transaction: old}, payoutStart(old))
	require.Error(t, err, "the store refuses a net_amount that is not debited_amount − client_fee")
	require.False(t, ok)
	old.NetAmount = sika.NewAmount(decimal.NewFromInt(822))
	_, _, ok, err = st.CreatePayout(ctx, store.NewTransaction{Transaction: old}, payoutStart(old))
	require.NoError(t, err)
	require.True(t, ok)
	// As the API wrote payouts before: net_amount = debited_amount.
	_, err = st.Pool().Exec(ctx, `UPDATE transactions SET net_amount = debited_amount WHERE id = $1`, old.ID)
	require.NoError(t, err)
	free := outbound(t, m, sika.TypePayout, "1000")
	_, _, ok, err = st.CreatePayout(ctx, store.NewTransaction{Transaction: free}, payoutStart(free))
	require.NoError(t, err)
	require.True(t, ok)

	body, err := fs.ReadFile(migrations.FS, "0020_transactions_net_amount.sql")
	require.NoError(t, err)
	amounts := func() map[string]string {
		rows, err := st.Pool().Query(ctx, `SELECT transaction_type || ' ' || requested_amount, debited_amount - net_amount - client_fee, net_amount
			FROM transactions WHERE merchant_id = $1`, m.ID)
		require.NoError(t, err)
		defer rows.Close()
		out := map[string]string{}
		for rows.Next() {
			var key string
			var gap, net decimal.Decimal
			require.NoError(t, rows.Scan(&key, &gap, &net))
			out[key] = "net " + net.StringFixed(2) + ", gap " + gap.StringFixed(2)
		}
		require.NoError(t, rows.Err())
		return out
	}
	assert.Equal(t, map[string]string{"PAIEMENT 5000.00": "net 5000.00, gap 0.00", "RETRAIT 831.00": "net 831.00, gap -9.00",
		"RETRAIT 1000.00": "net 1000.00, gap 0.00"}, amounts(), "written as before")
	for range 2 {
		_, err = st.Pool().Exec(ctx, string(body))
		require.NoError(t, err)
		assert.Equal(t, map[string]string{"PAIEMENT 5000.00": "net 5000.00, gap 0.00", "RETRAIT 831.00": "net 822.00, gap 0.00",
			"RETRAIT 1000.00": "net 1000.00, gap 0.00"}, amounts(), "the beneficiary's 822")
	}
	var pending decimal.Decimal
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT pending_amount FROM wallets WHERE merchant_id = $1`, m.ID).Scan(&pending))
	assert.Equal(t, "1831.00", pending.StringFixed(2), "the holds are the debited amounts, untouched")
	disc, err := st.CheckLedger(ctx)
	require.NoError(t, err)
	assert.Nil(t, disc)
}
