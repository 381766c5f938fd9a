package wave

import (
	"testing"
	"unicode/utf8"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/gatewaytest"
)

func TestSessionStatusMapping(t *testing.T) {
	failed := func(code string) *paymentError { return &paymentError{Code: code, Message: "m"} }
	cases := []struct {
		checkout, payment string
		lastError         *paymentError
		want              gateway.Status
		code              string
	}{
		{"open", "processing", nil, gateway.StatusPending, ""},
		{"open", "cancelled", failed("insufficient-funds"), gateway.StatusPending, ""}, // may still be paid
		{"complete", "succeeded", nil, gateway.StatusSuccess, ""},
		{"complete", "processing", nil, gateway.StatusPending, ""},
		{"complete", "cancelled", nil, gateway.StatusFailed, gateway.FailurePayerDeclined},
		{"complete", "cancelled", failed("blocked-account"), gateway.StatusFailed, gateway.FailurePayerDeclined},
		{"complete", "cancelled", failed("customer-age-restricted"), gateway.StatusFailed, gateway.FailurePayerDeclined},
		{"complete", "cancelled", failed("cross-border-payment-not-allowed"), gateway.StatusFailed, gateway.FailurePayerDeclined},
		{"complete", "cancelled", failed("insufficient-funds"), gateway.StatusFailed, gateway.FailureInsufficientFunds},
		{"complete", "cancelled", failed("payer-mobile-mismatch"), gateway.StatusFailed, gateway.FailureInvalidNumber},
		{"complete", "cancelled", failed("kyb-limits-exceeded"), gateway.StatusFailed, gateway.FailureGatewayError},
		{"complete", "cancelled", failed("payment-failure"), gateway.StatusFailed, gateway.FailureGatewayError},
		{"complete", "cancelled", failed("something-new"), gateway.StatusFailed, gateway.FailureGatewayError},
		{"expired", "processing", nil, gateway.StatusFailed, gateway.FailureExpired},
		{"expired", "cancelled", failed("insufficient-funds"), gateway.StatusFailed, gateway.FailureExpired},
		{"expired", "succeeded", nil, gateway.StatusSuccess, ""}, // paid is paid
	}
	for _, tc := range cases {
		name := tc.checkout + "/" + tc.payment
		if tc.lastError != nil {
			name += "/" + tc.lastError.Code
		}
		t.Run(name, func(t *testing.T) {
			st, err := session{ID: "cos-1", CheckoutStatus: tc.checkout, PaymentStatus: tc.payment, LastPaymentError: tc.lastError}.operationStatus("ref")
			require.NoError(t, err)
			assert.Equal(t, tc.want, st.Status)
			assert.Equal(t, tc.code, st.FailureCode)
			assert.Equal(t, "cos-1", st.GatewayReference)
			assert.Equal(t, "ref", st.Reference)
			if tc.lastError != nil && st.Status == gateway.StatusFailed {
				assert.Contains(t, st.FailureMessage, tc.lastError.Code)
			}
		})
	}
	_, err := session{CheckoutStatus: "weird"}.operationStatus("ref")
	assert.Error(t, err)
	_, err = session{CheckoutStatus: "complete", PaymentStatus: "weird"}.operationStatus("ref")
	assert.Error(t, err)
}

func TestPayoutStatusMapping(t *testing.T) {
	cases := []struct {
		status, errCode string
		want            gateway.Status
		code            string
	}{
		{"processing", "", gateway.StatusPending, ""},
		{"succeeded", "", gateway.StatusSuccess, ""},
		{"failed", "recipient-limit-exceeded", gateway.StatusFailed, gateway.FailureRecipientLimit},
		{"failed", "recipient-account-blocked", gateway.StatusFailed, gateway.FailureRecipientNotFound},
		{"failed", "recipient-account-inactive", gateway.StatusFailed, gateway.FailureRecipientNotFound},
		{"failed", "recipient-minor", gateway.StatusFailed, gateway.FailureRecipientNotFound},
		{"failed", "country-mismatch", gateway.StatusFailed, gateway.FailureInvalidNumber},
		{"failed", "insufficient-funds", gateway.StatusFailed, gateway.FailureGatewayError}, // our wallet, not theirs
		{"failed", "", gateway.StatusFailed, gateway.FailureGatewayError},
		{"reversed", "", gateway.StatusFailed, gateway.FailureGatewayError},
	}
	for _, tc := range cases {
		t.Run(tc.status+"/"+tc.errCode, func(t *testing.T) {
			p := payout{ID: "pt-1", Status: tc.status}
			if tc.errCode != "" {
				p.PayoutError = &payoutError{ErrorCode: tc.errCode, ErrorMessage: "m"}
			}
			st, err := p.operationStatus("ref")
			require.NoError(t, err)
			assert.Equal(t, tc.want, st.Status)
			assert.Equal(t, tc.code, st.FailureCode)
			assert.Equal(t, "pt-1", st.GatewayReference)
		})
	}
	_, err := payout{Status: "weird"}.operationStatus("ref")
	assert.Error(t, err)
}

func TestAmounts(t *testing.T) {
	cases := []struct {
		amount, currency, want string
		ok                     bool
	}{
		{"1000", "XOF", "1000", true},
		{"1000.00", "XOF", "1000", true},
		{"1000.5", "XOF", "", false},
		{"12.34", "USD", "12.34", true},
		{"12.345", "USD", "", false},
		{"0", "XOF", "", false},
		{"-5", "XOF", "", false},
		{"100", "CFA", "100", true},
		{"100", "XO", "", false},
	}
	for _, tc := range cases {
		got, err := formatAmount(decimal.RequireFromString(tc.amount), tc.currency)
		if !tc.ok {
			assert.Equal(t, gateway.KindInvalid, gateway.KindOf(err), "%s %s", tc.amount, tc.currency)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, got)
	}
	assert.True(t, sameAmount("1000", "1000.00"))
	assert.False(t, sameAmount("1000", "1001"))
	assert.False(t, sameAmount("1000", "mille"))
}

func TestPhonesAndText(t *testing.T) {
	for phone, ok := range map[string]bool{"+221770000000": true, "+2250700000000": true, "221770000000": false,
		"+0221770000": false, "+22177 000000": false, "+1234567": false, "+1234567890123456": false, "": false} {
		assert.Equal(t, ok, isE164(phone), phone)
	}
	assert.Equal(t, "Payout 42", truncateRunes("  Payout 42 ", 40))
	long := "Facture n° 42 — réglée à Dakar, merci beaucoup à vous"
	cut := truncateRunes(long, 40)
	assert.LessOrEqual(t, utf8.RuneCountInString(cut), 40)
	assert.True(t, utf8.ValidString(cut))
	assert.Equal(t, "Facture n° 42 — réglée à Dakar, merci be", cut)
	assert.Equal(t, "éé", truncateRunes("éé ééé", 3), "no space left dangling at the cut")
}

func TestValidation(t *testing.T) {
	f := manualFake(t)
	c := newClient(t, f, nil)
	expect := func(err error, code string) {
		t.Helper()
		assert.Equal(t, gateway.KindInvalid, gateway.KindOf(err), "%v", err)
		assert.Equal(t, code, gateway.CodeOf(err), "%v", err)
	}

	req := collectReq(gatewaytest.Reference())
	req.Amount = decimal.RequireFromString("999.50")
	_, err := c.Collect(t.Context(), req)
	expect(err, gateway.FailureGatewayError)

	req = collectReq(gatewaytest.Reference())
	req.Phone = "770000000"
	_, err = c.Collect(t.Context(), req)
	expect(err, gateway.FailureInvalidNumber)

	_, err = c.Collect(t.Context(), collectReq(""))
	expect(err, gateway.FailureGatewayError)

	unconfigured := newClient(t, f, func(cfg *Config) { cfg.SuccessURL = "" })
	_, err = unconfigured.Collect(t.Context(), collectReq(gatewaytest.Reference()))
	expect(err, gateway.FailureGatewayError)

	out := payoutReq(gatewaytest.Reference())
	out.Phone = "+221 77 000 00 00"
	_, err = c.Disburse(t.Context(), out)
	expect(err, gateway.FailureInvalidNumber)

	noPayouts := newClient(t, f, func(cfg *Config) { cfg.PayoutAPIKey = "" })
	_, err = noPayouts.Disburse(t.Context(), payoutReq(gatewaytest.Reference()))
	expect(err, gateway.FailureGatewayError)
	assert.Contains(t, err.Error(), "payouts not configured")
	_, err = noPayouts.DisbursementStatus(t.Context(), gatewaytest.Reference())
	expect(err, gateway.FailureGatewayError)

	_, err = c.ConfirmOTP(t.Context(), gatewaytest.Reference(), "123456")
	expect(err, gateway.FailureGatewayError)

	assert.Empty(t, f.Seen(), "nothing invalid reaches Wave")
}

func TestDefaults(t *testing.T) {
	c := New(Config{})
	assert.Equal(t, "wave", c.Name())
	assert.Equal(t, "https://api.wave.com", c.base)
	assert.Equal(t, DefaultTimeout, c.cfg.Timeout)
	assert.NotNil(t, c.cfg.Memory)
	assert.NotNil(t, c.cfg.HTTPClient)
	assert.NotNil(t, c.cfg.Now)
	assert.Equal(t, "https://example.test/return/a%2Fb", withReference("https://example.test/return/{reference}", "a/b"))
}
