package wave

import (
	"context"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/sikahq/sika/gateway"
)

// Wave's limits on a payout's text fields, in characters.
const (
	maxPaymentReason = 40
	maxName          = 255
	maxReference     = 255
)

// payoutBody validates a payout and builds its body.
func (c *Client) payoutBody(req gateway.DisburseRequest) (payoutRequest, error) {
	if err := checkReference(req.Reference); err != nil {
		return payoutRequest{}, err
	}
	amount, err := formatAmount(req.Amount, req.Currency)
	if err != nil {
		return payoutRequest{}, err
	}
	if !isE164(req.Phone) {
		return payoutRequest{}, gateway.Invalid(gateway.FailureInvalidNumber, "phone number must be E.164")
	}
	return payoutRequest{
		Currency:        strings.ToUpper(req.Currency),
		ReceiveAmount:   amount,
		Mobile:          req.Phone,
		Name:            truncateRunes(req.RecipientName, maxName),
		ClientReference: req.Reference,
		PaymentReason:   truncateRunes(req.Description, maxPaymentReason),
	}, nil
}

// disburse returns the reference's payout, sending it when Wave has none. The idempotency-key
// is the reference, the same on every retry, so that Wave itself never pays a reference twice.
func (c *Client) disburse(ctx context.Context, ref string, body payoutRequest) (payout, error) {
	p, err := initiate(ctx, c, payouts, ref, func(ctx context.Context) (payout, error) {
		return createOp(ctx, c, payouts, ref, body)
	})
	if err != nil {
		return payout{}, err
	}
	if p.ReceiveAmount != "" && !sameAmount(p.ReceiveAmount, body.ReceiveAmount) ||
		p.Currency != "" && !strings.EqualFold(p.Currency, body.Currency) || p.Mobile != "" && p.Mobile != body.Mobile {
		return payout{}, gateway.Invalid(gateway.FailureGatewayError, c.cfg.Name+": reference "+ref+
			" already has a payout of "+p.ReceiveAmount+" "+p.Currency+" to another beneficiary or amount")
	}
	return p, nil
}

// payouts are Wave's payouts. One reference has one payout (its idempotency-key); a succeeded
// one wins if ever there were two.
var payouts = finder[payout]{kind: kindPayout, noun: "payout", api: payoutAPI,
	path: "/v1/payout", search: "/v1/payouts/search",
	id: func(p payout) string { return p.ID }, reference: func(p payout) string { return p.ClientReference },
	prefer: func(a, b payout) bool { return a.Status == payoutSucceeded && b.Status != payoutSucceeded },
	status: payout.operationStatus}

// checkReference validates our reference, which travels as client_reference and
// idempotency-key.
func checkReference(ref string) error {
	if ref == "" || len([]rune(ref)) > maxReference || strings.TrimSpace(ref) != ref {
		return gateway.Invalid(gateway.FailureGatewayError, "reference must be 1 to 255 characters without surrounding spaces")
	}
	return nil
}

// zeroDecimal lists the currencies Wave takes in whole units; others take at most 2 decimals.
var zeroDecimal = map[string]bool{"XOF": true, "XAF": true, "GNF": true, "UGX": true}

// formatAmount renders a positive amount as Wave's decimal string.
func formatAmount(amount decimal.Decimal, currency string) (string, error) {
	currency = strings.ToUpper(currency)
	if len(currency) != 3 {
		return "", gateway.Invalid(gateway.FailureGatewayError, "currency must be an ISO 4217 code")
	}
	if !amount.IsPositive() {
		return "", gateway.Invalid(gateway.FailureGatewayError, "amount must be positive")
	}
	places := int32(2)
	if zeroDecimal[currency] {
		places = 0
	}
	if !amount.Equal(amount.Truncate(places)) {
		return "", gateway.Invalid(gateway.FailureGatewayError,
			fmt.Sprintf("amount %s %s has more than %d decimals", amount, currency, places))
	}
	return amount.String(), nil
}

// isE164 reports whether phone is an E.164 number: "+", then 8 to 15 digits, the first not 0.
func isE164(phone string) bool {
	digits, ok := strings.CutPrefix(phone, "+")
	if !ok || len(digits) < 8 || len(digits) > 15 || digits[0] == '0' {
		return false
	}
	return strings.Trim(digits, "0123456789") == ""
}
