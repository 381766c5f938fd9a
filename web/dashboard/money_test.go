package dashboard

import (
	"errors"
	"html/template"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// TestMoneyTranslationsComplete: the keys the money pages build from a value ((print "prefix_"
// value) in a template, "apierr_"+code, the field messages) exist in both languages.
func TestMoneyTranslationsComplete(t *testing.T) {
	var keys []string
	for _, s := range []sika.CheckoutStatus{sika.CheckoutPending, sika.CheckoutPaid, sika.CheckoutExpired, sika.CheckoutCancelled} {
		keys = append(keys, "checkout_"+string(s))
	}
	for _, l := range checkoutLifetimes {
		keys = append(keys, "lifetime_"+l)
	}
	for _, lt := range []sika.LedgerType{sika.LedgerCollection, sika.LedgerPayoutHold, sika.LedgerPayout, sika.LedgerPayoutReversal,
		sika.LedgerTransferOut, sika.LedgerTransferIn, sika.LedgerAdjustment} {
		keys = append(keys, "ledger_"+string(lt))
	}
	for _, mt := range []sika.PayoutMethodType{sika.PayoutMobileMoney, sika.PayoutBank} {
		keys = append(keys, "method_type_"+string(mt))
	}
	for _, d := range []sika.Direction{sika.DirectionInbound, sika.DirectionOutbound} {
		keys = append(keys, "debited_amount_"+string(d), "net_amount_"+string(d))
		for _, m := range []sika.FeeChargeMode{sika.FeeAddOn, sika.FeeDeducted} {
			keys = append(keys, "fee_mode_"+string(d)+"_"+string(m))
		}
	}
	keys = append(keys, "net_amount_"+string(sika.TypeTransfer))
	for _, a := range []sika.AmountType{sika.AmountFixed, sika.AmountFree} {
		keys = append(keys, "amount_type_"+string(a))
	}
	for _, k := range fieldMessages {
		keys = append(keys, k)
	}
	for _, p := range fieldPatterns {
		keys = append(keys, p.key)
	}
	keys = append(keys, "apierr_validation", "apierr_other", "err_invalid", "verified_notice", "retried_notice", "link_saved",
		"session_created", "session_cancelled", "links_title", "link_new_title", "link_title", "sessions_title", "payouts_title",
		"payout_confirm_title", "settlements_title", "transfers_title", "methods_title", "ledger_title", "volume_collected",
		"volume_paid_out", "volume_day", "refund_title", "refund_amount", "refund_amount_help", "refund_reason", "refund_button",
		"refund_confirm_title", "refund_confirm_help", "refund_customer_gets", "refund_fee_help", "refund_debited", "refund_via",
		"refund_via_operator", "refund_via_payout", "refund_send", "refund_change", "amount_refunded", "refunded_transaction",
		"refunded_transaction_link", "type_REMBOURSEMENT")
	for _, st := range []sika.RefundStatus{sika.RefundNone, sika.RefundPartial, sika.RefundFull} {
		keys = append(keys, "refund_status_"+string(st))
	}
	for _, k := range keys {
		for _, lang := range []string{"fr", "en"} {
			_, ok := translations[lang][k]
			assert.True(t, ok, "%s has no %s text", k, lang)
		}
	}
}

func TestBuildVolume(t *testing.T) {
	since := time.Date(2026, 10, 27, 0, 0, 0, 0, time.UTC)
	d, err := buildVolume([]store.DailyVolume{
		{Day: since, Currency: "XOF", Collected: decimal.RequireFromString("1000"), CollectionsSucceeded: 1, CollectionsFailed: 1},
		{Day: since.AddDate(0, 0, 29), Currency: "XOF", Collected: decimal.RequireFromString("2500.50"), PaidOut: decimal.RequireFromString("700"), CollectionsSucceeded: 2},
		{Day: since.AddDate(0, 0, 3), Currency: "CDF", Collected: decimal.RequireFromString("10"), CollectionsSucceeded: 1},
	}, since, "fr")
	require.NoError(t, err)
	require.Len(t, d.Currencies, 2)
	xof := d.Currencies[0]
	assert.Equal(t, "XOF", xof.Currency)
	require.Len(t, xof.Days, volumeDays, "a day without money is a zero, not a gap")
	assert.True(t, xof.Days[1].Collected.IsZero())
	assert.Equal(t, "3500.5", xof.Collected.String())
	assert.Equal(t, "3\u00a0501\u00a0FCFA", xof.CollectedText, "sika.FormatMoney rounds XOF to the unit")
	assert.Equal(t, 4, d.Succeeded)
	assert.Equal(t, 5, d.Finished)
	assert.Equal(t, "80,0\u00a0%", d.SuccessRate)
	assert.Contains(t, d.Chart, `"collected":["1000.00","0.00"`)

	assert.Equal(t, "", successRate(0, 0, "fr"), "no rate without a finished collection")
	assert.Equal(t, "66.7%", successRate(2, 3, "en"))
}

func TestFormRefusal(t *testing.T) {
	f := newForm(map[string]string{"amount": "-3", "recipient": ""})
	require.NoError(t, f.refusal("fr", &sika.Error{Code: sika.CodeValidation, Fields: map[string][]string{
		"amount": {sika.MsgAmountNotPositive}, "recipient": {"Not a phone number of BJ."}, "metadata": {"Must be an object."}}}))
	assert.Equal(t, template.HTML("Saisissez un montant supérieur à 0."), f.Err("amount"))
	assert.Equal(t, template.HTML(`Valeur invalide. <span lang="en">(Not a phone number of BJ.)</span>`), f.Err("recipient"),
		"an unknown message follows a French one as the API wrote it, marked English")
	assert.Equal(t, "Corrigez les champs signalés.", f.Alert)
	assert.Equal(t, "metadata: Must be an object.", f.Detail, "a field the form does not have is said above it")
	assert.Equal(t, 400, f.Status)

	f = newForm(nil)
	require.NoError(t, f.refusal("en", sika.Errorf(sika.CodeInsufficientBalance, "Wallet BJ has 10.00 XOF available.")))
	assert.Equal(t, "Available balance too low.", f.Alert)
	assert.Equal(t, "Wallet BJ has 10.00 XOF available.", f.Detail)
	assert.Equal(t, 422, f.Status)

	f = newForm(nil)
	require.NoError(t, f.refusal("fr", sika.Errorf(sika.Code("brand_new_code"), "Something new.")))
	assert.Equal(t, "L'opération a été refusée.", f.Alert, "a code the dashboard does not know yet")

	for _, err := range []error{sika.NotFound("Payment link"), errors.New("connection refused"), sika.Errorf(sika.CodeInternal, "x")} {
		assert.Equal(t, err, newForm(nil).refusal("fr", err), "not an answer about the form: the error page")
	}
}
