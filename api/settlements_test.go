package api

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// staff returns the headers of a staff member's dashboard session.
func (ts *testServer) staff(t *testing.T) []string {
	t.Helper()
	hash, err := sika.HashPassword("staff password long enough")
	require.NoError(t, err)
	m, _, err := testStore.RegisterMember(context.Background(), "staff-"+time.Now().Format("150405.000000")+"@sika.local", hash, "Staff", sika.StaffAdmin, nil)
	require.NoError(t, err)
	tok, _, err := ts.issueToken(m)
	require.NoError(t, err)
	return bearer(tok)
}

func (ps *paymentStack) verifiedMethod(t *testing.T, acct *account) sika.PayoutMethod {
	t.Helper()
	r := ps.call(t, "POST", "/api/v1/merchant-payout-methods/", map[string]string{"type": "MOBILE_MONEY", "label": "Owner's MTN",
		"network": "MTN_BJ", "phone_number": "97000123"}, acct.dashboard(sika.EnvironmentTest)...)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var m sika.PayoutMethod
	r.data(t, &m)
	assert.False(t, m.IsVerified)
	r = ps.call(t, "PATCH", "/api/v1/admin/merchant-payout-methods/"+m.ID.String()+"/", map[string]bool{"is_verified": true}, ps.staff(t)...)
	require.Equal(t, 200, r.Status, "%s", r.Body)
	r.data(t, &m)
	require.True(t, m.IsVerified)
	require.NotNil(t, m.VerifiedAt)
	return m
}

func TestPayoutMethodsAndSettlements(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	fund(t, acct, "BJ", "MTN_BJ", "20000")
	key := acct.key(sika.EnvironmentTest, sika.ScopePayout)

	r := ps.call(t, "POST", "/api/v1/merchant-payout-methods/", map[string]string{"type": "MOBILE_MONEY", "network": "MTN_BJ", "phone_number": "97000123"}, key...)
	assert.Equal(t, 403, r.Status)
	assert.Equal(t, "dashboard_only", r.code())
	r = ps.call(t, "POST", "/api/v1/merchant-payout-methods/", map[string]string{"type": "BANK", "bank_name": "Ecobank"}, acct.dashboard(sika.EnvironmentTest)...)
	assert.Equal(t, 400, r.Status)
	assert.Contains(t, r.fields(), "account_holder_name")
	r = ps.call(t, "POST", "/api/v1/merchant-payout-methods/", map[string]string{"type": "MOBILE_MONEY", "label": "unverified",
		"network": "MTN_BJ", "phone_number": "97000123"}, acct.dashboard(sika.EnvironmentTest)...)
	require.Equal(t, 201, r.Status)
	var unverified sika.PayoutMethod
	r.data(t, &unverified)
	r = ps.call(t, "PATCH", "/api/v1/admin/merchant-payout-methods/"+unverified.ID.String()+"/", map[string]bool{"is_verified": true}, acct.dashboard(sika.EnvironmentTest)...)
	assert.Equal(t, 403, r.Status)
	assert.Equal(t, "admin_only", r.code())

	body := map[string]string{"amount": "5000", "currency": "XOF", "country": "BJ", "payout_method": unverified.ID.String()}
	r = ps.call(t, "POST", "/api/v1/settlements/", body, key...)
	assert.Equal(t, 422, r.Status)
	assert.Equal(t, "payout_method_unverified", r.code())

	m := ps.verifiedMethod(t, acct)
	var list struct {
		Count   int
		Results []sika.PayoutMethod
	}
	ps.call(t, "GET", "/api/v1/merchant-payout-methods/", nil, key...).data(t, &list)
	assert.Equal(t, 2, list.Count)
	other := ps.newAccount(t, true)
	assert.Equal(t, 404, ps.call(t, "GET", "/api/v1/merchant-payout-methods/"+m.ID.String()+"/", nil, other.key(sika.EnvironmentTest, sika.ScopeBoth)...).Status)

	body["payout_method"] = m.ID.String()
	r = ps.call(t, "POST", "/api/v1/settlements/", body, key...)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var st sika.Settlement
	r.data(t, &st)
	assert.Equal(t, "5000.00", sika.FormatAmount(st.Amount.Decimal))
	d := ps.final(t, acct, st.Transaction, 10*time.Second)
	assert.Equal(t, sika.StatusSuccess, d.Status)
	assert.Equal(t, sika.TypePayout, d.Type)
	w := ps.wallet(t, acct)
	assert.Equal(t, "15000.00", sika.FormatAmount(w.AvailableAmount.Decimal))
	assert.True(t, w.PendingAmount.IsZero())
	var sl struct {
		Count   int
		Results []sika.Settlement
	}
	ps.call(t, "GET", "/api/v1/settlements/", nil, key...).data(t, &sl)
	require.Equal(t, 1, sl.Count)
	assert.Equal(t, sika.StatusSuccess, sl.Results[0].Status)
	body["amount"] = "100000"
	r = ps.call(t, "POST", "/api/v1/settlements/", body, key...)
	assert.Equal(t, 422, r.Status)
	assert.Equal(t, "insufficient_balance", r.code())
}

func TestWalletTransfers(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	fund(t, acct, "BJ", "MTN_BJ", "10000")
	key := acct.key(sika.EnvironmentTest, sika.ScopePayout)

	r := ps.call(t, "POST", "/api/v1/wallet-transfers/", map[string]string{"amount": "4000", "from_country": "BJ", "to_country": "CM"}, key...)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var wt sika.WalletTransfer
	r.data(t, &wt)
	assert.Equal(t, "XOF", wt.FromCurrency)
	assert.Equal(t, "XAF", wt.ToCurrency)
	assert.Equal(t, "4000.00", sika.FormatAmount(wt.CreditedAmount.Decimal), "XOF and XAF are at par")
	assert.Equal(t, sika.StatusSuccess, wt.Status)
	d := ps.detail(t, acct, wt.Transaction)
	assert.Equal(t, sika.TypeTransfer, d.Type)
	assert.Equal(t, sika.DirectionOutbound, d.FlowDirection)
	assert.Equal(t, []string{"null>PENDING/CLIENT", "PENDING>SUCCESS/SYSTEM"}, triggers(d))

	balances := map[string]string{}
	for _, w := range ps.balances(t, acct) {
		balances[w.Country] = sika.FormatAmount(w.AvailableAmount.Decimal)
	}
	assert.Equal(t, map[string]string{"BJ": "6000.00", "CM": "4000.00"}, balances)

	r = ps.call(t, "POST", "/api/v1/wallet-transfers/", map[string]string{"amount": "1000", "from_country": "CM", "to_country": "CD"}, key...)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	r.data(t, &wt)
	assert.Equal(t, "CDF", wt.ToCurrency)
	assert.Equal(t, "5061.30", sika.FormatAmount(wt.CreditedAmount.Decimal), "1000 XAF at 5.0613073722 CDF is 5061.307, rounded down")

	for _, c := range []struct {
		body   map[string]string
		status int
		code   string
	}{
		{map[string]string{"amount": "999999", "from_country": "BJ", "to_country": "CI"}, 422, "insufficient_balance"},
		{map[string]string{"amount": "10", "from_country": "BJ", "to_country": "BJ"}, 400, ""},
		{map[string]string{"amount": "10.5", "from_country": "BJ", "to_country": "CI"}, 400, ""},
		{map[string]string{"amount": "10", "from_country": "XX", "to_country": "CI"}, 400, ""},
	} {
		r := ps.call(t, "POST", "/api/v1/wallet-transfers/", c.body, key...)
		assert.Equal(t, c.status, r.Status, "%v: %s", c.body, r.Body)
		if c.code != "" {
			assert.Equal(t, c.code, r.code())
		}
	}
	r = ps.call(t, "POST", "/api/v1/wallet-transfers/", map[string]string{"amount": "10", "from_country": "BJ", "to_country": "CI"}, acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
	assert.Equal(t, 403, r.Status)
	var list struct{ Count int }
	ps.call(t, "GET", "/api/v1/wallet-transfers/", nil, key...).data(t, &list)
	assert.Equal(t, 2, list.Count)
	disc, err := testStore.CheckLedger(context.Background())
	require.NoError(t, err)
	assert.Nil(t, disc)
}

// TestMixedOutboundOperationsNeverOverdraw races payouts, settlements and transfers (both ways)
// on one wallet: whatever wins, the wallet never goes negative and equals its ledger.
func TestMixedOutboundOperationsNeverOverdraw(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	fund(t, acct, "BJ", "MTN_BJ", "10000")
	fund(t, acct, "CI", "MTN_CI", "3000")
	m := ps.verifiedMethod(t, acct)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayout)

	var wg sync.WaitGroup
	results := make([]*response, 60)
	for i := range results {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var body map[string]string
			path := ""
			switch i % 4 {
			case 0:
				path, body = "/api/v1/payouts/initialize/", map[string]string{"amount": "1000", "currency": "XOF", "country": "BJ", "method": "MTN_BJ", "recipient": "97000123"}
			case 1:
				path, body = "/api/v1/settlements/", map[string]string{"amount": "1000", "currency": "XOF", "country": "BJ", "payout_method": m.ID.String()}
			case 2:
				path, body = "/api/v1/wallet-transfers/", map[string]string{"amount": "1000", "from_country": "BJ", "to_country": "CI"}
			default:
				path, body = "/api/v1/wallet-transfers/", map[string]string{"amount": "1000", "from_country": "CI", "to_country": "BJ"}
			}
			results[i] = ps.call(t, "POST", path, body, key...)
		}(i)
	}
	wg.Wait()
	for _, r := range results {
		if r.Status != 201 {
			assert.Equal(t, 422, r.Status, "%s", r.Body)
			assert.Equal(t, "insufficient_balance", r.code())
		}
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, w := range ps.balances(t, acct) {
			assert.True(c, w.PendingAmount.IsZero(), "holds of %s settled", w.Country)
		}
	}, 20*time.Second, 100*time.Millisecond)
	total := dec("0")
	for _, w := range ps.balances(t, acct) {
		assert.False(t, w.AvailableAmount.IsNegative())
		total = total.Add(w.AvailableAmount.Decimal)
	}
	assert.True(t, total.LessThanOrEqual(dec("13000")), "no money created: %s", total)
	disc, err := testStore.CheckLedger(context.Background())
	require.NoError(t, err)
	assert.Nil(t, disc)

}

// TestWalletTransfersRoundDown (issue 21): a transfer's credit is rounded down in the
// destination's minor unit, and one that would credit nothing is refused. With half-up, 8 GNF
// (0.52 XOF) arrived as 1 XOF and 1 XOF (15.32 GNF) as 15 GNF: ten transfers of 8 GNF to CI and
// one back turned 80 GNF into 153 GNF, in a loop.
func TestWalletTransfersRoundDown(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	fund(t, acct, "GN", "ORANGE_GN", "160")
	key := acct.key(sika.EnvironmentTest, sika.ScopePayout)
	transfer := func(amount, from, to string) *response {
		return ps.call(t, "POST", "/api/v1/wallet-transfers/", map[string]string{"amount": amount, "from_country": from, "to_country": to}, key...)
	}
	balances := func() map[string]string {
		out := map[string]string{}
		for _, w := range ps.balances(t, acct) {
			out[w.Country] = sika.FormatAmount(w.AvailableAmount.Decimal)
		}
		return out
	}
	// What the wallets are worth in XOF at the catalogue's rates: never more after a transfer.
	gnfToXOF, err := testStore.ExchangeRate(t.Context(), "GNF", "XOF")
	require.NoError(t, err)
	worth := func(b map[string]string) decimal.Decimal {
		held := func(country string) decimal.Decimal {
			if b[country] == "" {
				return decimal.Zero
			}
			return dec(b[country])
		}
		return held("GN").Mul(gnfToXOF).Add(held("CI"))
	}

	for i := range 10 {
		r := transfer("8", "GN", "CI")
		require.Equal(t, 400, r.Status, "transfer %d: %s", i, r.Body)
		assert.Equal(t, []string{"8 GNF is worth less than 1 XOF at the current rate (" + gnfToXOF.String() +
			" XOF per GNF), and a transfer is credited rounded down: transfer at least 16 GNF."}, r.fields()["amount"])
	}
	assert.Equal(t, map[string]string{"GN": "160.00"}, balances(), "a refused transfer moves nothing")

	before := worth(balances())
	for i := range 10 {
		r := transfer("16", "GN", "CI")
		require.Equal(t, 201, r.Status, "transfer %d: %s", i, r.Body)
		var wt sika.WalletTransfer
		r.data(t, &wt)
		assert.Equal(t, "1.00", sika.FormatAmount(wt.CreditedAmount.Decimal), "16 GNF is 1.04 XOF")
		after := worth(balances())
		assert.True(t, after.LessThanOrEqual(before), "transfer %d: worth %s XOF, was %s", i, after, before)
		before = after
	}
	assert.Equal(t, map[string]string{"GN": "0.00", "CI": "10.00"}, balances())

	r := transfer("1", "CI", "GN")
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var wt sika.WalletTransfer
	r.data(t, &wt)
	assert.Equal(t, "15.00", sika.FormatAmount(wt.CreditedAmount.Decimal), "1 XOF is 15.32 GNF")
	require.Equal(t, 201, transfer("9", "CI", "GN").Status)
	assert.Equal(t, map[string]string{"GN": "152.00", "CI": "0.00"}, balances(), "160 GNF went round and came back as 152")
	assert.True(t, worth(balances()).LessThanOrEqual(before))

	disc, err := testStore.CheckLedger(context.Background())
	require.NoError(t, err)
	assert.Nil(t, disc)
}
