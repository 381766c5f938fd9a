package api

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
)

// TestAmountFieldsMeanOneThing (issue 21): each amount field keeps one meaning for every
// transaction type and fee mode, and that meaning is what really moved. For a collection and a
// payout in each fee mode, a refund, a settlement and a wallet transfer, once final:
//
//   - the equations: amount = requested_amount, client_fee = gateway_fee + platform_fee,
//     debited_amount − net_amount = client_fee; ADD_ON: net_amount = requested_amount;
//     DEDUCTED: debited_amount = requested_amount;
//   - debited_amount is what the paying side gave (the customer's operation at the sandbox for
//     a collection; the wallet's PAYOUT_HOLD, PAYOUT or TRANSFER_OUT entries otherwise) and
//     net_amount what the receiving side got (the wallet's COLLECTION entry; the operation sent
//     to the beneficiary; the other wallet, before conversion);
//   - the CSV export, the PDF invoice (collections) and the dashboard's transaction page show
//     the same values under those meanings; the dashboard's payout confirmation shows what the
//     record then says.
//
// A DEDUCTED payout of 831 XOF with a 9 XOF fee sent 822 and recorded net_amount 831.
func TestAmountFieldsMeanOneThing(t *testing.T) {
	ps := payments(t)
	acct := ps.newAccount(t, true)
	whitelistLoopback(t, acct, sika.EnvironmentTest)
	_, err := testStore.Pool().Exec(t.Context(), `UPDATE merchant_settings SET allow_client_override = true WHERE merchant_id = $1`, acct.Merchant.ID)
	require.NoError(t, err)
	testStore.FlushReadCache() // as the notification of the change does, without waiting for it
	fund(t, acct, "BJ", "MTN_BJ", "100000")
	payout := acct.key(sika.EnvironmentTest, sika.ScopePayout)
	c := dashTestClient(t, ps.url, acct)

	type made struct {
		name string
		id   uuid.UUID
		mode sika.FeeChargeMode
	}
	var all []made
	for _, mode := range []sika.FeeChargeMode{sika.FeeAddOn, sika.FeeDeducted} {
		body := benin("97000123")
		body["amount"], body["fee_charge_mode"] = "1000", string(mode)
		all = append(all, made{"collection " + string(mode), ps.pay(t, acct, body).ID, mode})

		body = payoutBody("97000456")
		body["amount"], body["fee_charge_mode"] = "831", string(mode)
		if mode == sika.FeeDeducted {
			// The dashboard's confirmation of such a payout (the merchant's default mode, DEDUCTED).
			preview := c.post(t, "/dashboard/payouts/preview/", map[string][]string{"method": {"MTN_BJ"}, "amount": {"831"},
				"recipient": {"97000456"}})
			require.Equal(t, 200, preview.Status, preview.Body)
			assert.Contains(t, preview.Body, `id="quote-debited">`+sika.FormatMoney(dec("831"), "XOF", "fr"))
			assert.Contains(t, preview.Body, `id="quote-received">`+sika.FormatMoney(dec("822"), "XOF", "fr"), "831 less the 9 XOF fee")
		}
		r := ps.payout(t, acct, body)
		require.Equal(t, 201, r.Status, "%s", r.Body)
		var p sika.Transaction
		r.data(t, &p)
		all = append(all, made{"payout " + string(mode), p.ID, mode})
	}
	method := ps.verifiedMethod(t, acct)
	r := ps.call(t, "POST", "/api/v1/settlements/", map[string]string{"amount": "2000", "currency": "XOF", "country": "BJ",
		"payout_method": method.ID.String()}, payout...)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var st sika.Settlement
	r.data(t, &st)
	all = append(all, made{"settlement", st.Transaction, sika.FeeDeducted})
	r = ps.call(t, "POST", "/api/v1/wallet-transfers/", map[string]string{"amount": "1500", "from_country": "BJ", "to_country": "GN"}, payout...)
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var wt sika.WalletTransfer
	r.data(t, &wt)
	all = append(all, made{"wallet transfer", wt.Transaction, sika.FeeDeducted})

	// A refund (always ADD_ON: the customer gets the amount, the wallet gives it and the fee) of
	// part of the ADD_ON collection.
	require.Equal(t, sika.StatusSuccess, ps.final(t, acct, all[0].id, 60*time.Second).Status)
	r = ps.refund(t, acct, map[string]any{"transaction": all[0].id, "amount": "400", "reason": "Damaged parcel"})
	require.Equal(t, 201, r.Status, "%s", r.Body)
	var rf sika.Transaction
	r.data(t, &rf)
	all = append(all, made{"refund", rf.ID, sika.FeeAddOn})

	records, _ := exportCSV(t, ps.testServer, "", acct.key(sika.EnvironmentTest, sika.ScopePayin)...)
	csvRows, _ := exportRecords(t, records)
	format := func(a sika.Amount) string { return sika.FormatAmount(a.Decimal) }
	for _, m := range all {
		t.Run(m.name, func(t *testing.T) {
			d := ps.final(t, acct, m.id, 60*time.Second)
			require.Equal(t, sika.StatusSuccess, d.Status, "%s", d.FailureCode)
			requested, fee, debited, net := d.RequestedAmount.Decimal, d.ClientFee.Decimal, d.DebitedAmount.Decimal, d.NetAmount.Decimal
			assert.Equal(t, m.mode, d.FeeChargeMode)

			// The equations.
			assert.True(t, d.Amount.Equal(requested), "amount %s = requested_amount %s", d.Amount, requested)
			assert.True(t, fee.Equal(d.GatewayFee.Add(d.PlatformFee.Decimal)), "client_fee %s = gateway_fee %s + platform_fee %s", fee, d.GatewayFee, d.PlatformFee)
			assert.True(t, debited.Sub(net).Equal(fee), "debited_amount %s − net_amount %s = client_fee %s", debited, net, fee)
			switch m.mode {
			case sika.FeeAddOn:
				assert.True(t, net.Equal(requested), "ADD_ON: net_amount %s = requested_amount %s", net, requested)
			case sika.FeeDeducted:
				assert.True(t, debited.Equal(requested), "DEDUCTED: debited_amount %s = requested_amount %s", debited, requested)
			}
			if d.Type == sika.TypeTransfer || strings.HasPrefix(m.name, "settlement") {
				assert.True(t, fee.IsZero(), "no fee")
			} else {
				assert.True(t, fee.IsPositive(), "a fee")
			}
			if m.name == "payout DEDUCTED" {
				assert.Equal(t, []string{"831.00", "9.00", "831.00", "822.00"}, []string{format(d.RequestedAmount), format(d.ClientFee), format(d.DebitedAmount), format(d.NetAmount)})
			}

			// What moved.
			entries := map[sika.LedgerType][]string{}
			rows, err := testStore.Pool().Query(t.Context(), `SELECT type, amount FROM ledger_entries WHERE transaction_id = $1`, d.ID)
			require.NoError(t, err)
			for rows.Next() {
				var typ sika.LedgerType
				var amount decimal.Decimal
				require.NoError(t, rows.Scan(&typ, &amount))
				entries[typ] = append(entries[typ], sika.FormatAmount(amount))
			}
			require.NoError(t, rows.Err())
			sent := map[string]bool{}
			for _, op := range ps.operations(d) {
				if op.Status == "SUCCESS" {
					sent[op.Amount] = true
				}
			}
			switch {
			case d.Type == sika.TypePayment:
				assert.Equal(t, map[string]bool{format(d.DebitedAmount): true}, sent, "the customer paid debited_amount")
				assert.Equal(t, map[sika.LedgerType][]string{sika.LedgerCollection: {format(d.NetAmount)}}, entries, "the wallet gained net_amount")
			case d.Type == sika.TypePayout || d.Type == sika.TypeRefund:
				assert.Equal(t, map[string]bool{format(d.NetAmount): true}, sent, "the beneficiary was sent net_amount")
				assert.Equal(t, map[sika.LedgerType][]string{sika.LedgerPayoutHold: {format(d.DebitedAmount)},
					sika.LedgerPayout: {format(d.DebitedAmount)}}, entries, "the wallet gave debited_amount")
			case d.Type == sika.TypeTransfer:
				assert.Empty(t, sent)
				rate, err := testStore.ExchangeRate(t.Context(), "XOF", "GNF")
				require.NoError(t, err)
				assert.Equal(t, map[sika.LedgerType][]string{sika.LedgerTransferOut: {format(d.DebitedAmount)},
					sika.LedgerTransferIn: {sika.FormatAmount(sika.ConvertAmount(net, rate, "GNF"))}}, entries,
					"the wallet gave debited_amount; the other gained net_amount, converted")
			default:
				t.Fatalf("unexpected type %s", d.Type)
			}

			// The CSV export says the same.
			row := csvRows[d.ID]
			require.NotNil(t, row, "exported")
			assert.Equal(t, []string{format(d.RequestedAmount), format(d.ClientFee), format(d.DebitedAmount), format(d.GatewayFee), format(d.PlatformFee), format(d.NetAmount)},
				[]string{row["requested_amount"], row["client_fee"], row["debited_amount"], row["gateway_fee"], row["platform_fee"], row["net_amount"]})

			// The dashboard's transaction page, under the labels of the meanings.
			page := c.Get(t, "/dashboard/transactions/"+d.ID.String()+"/")
			require.Equal(t, 200, page.Status, page.Body)
			paying, receiving := "Débité de votre solde", "Reçu par le bénéficiaire"
			if d.FlowDirection == sika.DirectionInbound {
				paying, receiving = "Payé par le client", "Crédité sur votre solde"
			} else if d.Type == sika.TypeTransfer {
				receiving = "Envoyé à l&#39;autre solde (avant conversion)"
			}
			assert.Contains(t, page.Body, "<dt>"+paying+`</dt><dd id="tx-debited">`+sika.FormatMoney(debited, d.Currency, "fr"))
			assert.Contains(t, page.Body, "<dt>"+receiving+`</dt><dd id="tx-net">`+sika.FormatMoney(net, d.Currency, "fr"))

			// The invoice of a collection: what the customer paid, the fee added or included.
			if d.Type == sika.TypePayment {
				r := ps.call(t, "GET", "/api/v1/transactions/"+d.ID.String()+"/invoice/?lang=en", nil, payout...)
				require.Equal(t, 200, r.Status, "%s", r.Body)
				text := pdfText(t, r.Body)
				feeLabel := "Fees"
				if m.mode == sika.FeeDeducted {
					feeLabel = "Fees included in the amount"
				}
				for _, want := range []string{"Requested amount", feeLabel, "Total paid", sika.FormatMoney(requested, d.Currency, "en"),
					sika.FormatMoney(fee, d.Currency, "en"), sika.FormatMoney(debited, d.Currency, "en")} {
					assert.Contains(t, text, strings.ReplaceAll(want, sika.MoneySpace, " "))
				}
			}
		})
	}
	disc, err := testStore.CheckLedger(t.Context())
	require.NoError(t, err)
	assert.Nil(t, disc)
}
