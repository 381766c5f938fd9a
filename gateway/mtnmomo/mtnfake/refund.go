package mtnfake

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
)

// productRefund marks the refunds of the fake: POST /disbursement/v1_0/refund and
// GET /disbursement/v1_0/refund/{referenceId}, on the disbursement product's key and tokens. A
// refund names the request-to-pay it gives back (referenceIdToRefund); like a transfer it is
// accepted (202) and decided at its first status read: FAILED NOT_ALLOWED when the request-to-pay
// is unknown, not SUCCESSFUL, or the refunds not FAILED would exceed its amount; SUCCESSFUL
// otherwise (or FAILED NOT_ALLOWED after Next(gatewaytest.Decline)).
const productRefund = "refund"

// checkRefundBody checks the documented shape of a refund body: amount, currency, externalId,
// payerMessage, payeeNote and referenceIdToRefund (a UUID), no payer or payee.
func (f *Server) checkRefundBody(body map[string]any) {
	for _, k := range []string{"currency", "externalId", "payerMessage", "payeeNote", "referenceIdToRefund"} {
		if _, ok := body[k].(string); !ok {
			f.Errorf("refund body field %s missing", k)
		}
	}
	if ref, _ := body["referenceIdToRefund"].(string); uuid.Validate(ref) != nil || len(ref) != 36 {
		f.Errorf("referenceIdToRefund %q is not a UUID", ref)
	}
	if body["payer"] != nil || body["payee"] != nil {
		f.Errorf("refund body with a payer or payee: MTN takes them from the request-to-pay")
	}
}

// refundableLocked reports whether a refund of body fits its request-to-pay (f.Mu held).
func (f *Server) refundableLocked(body map[string]any) bool {
	colRef := fmt.Sprint(body["referenceIdToRefund"])
	col := f.ops[colRef]
	if col == nil || col.product != "collection" || col.status != "SUCCESSFUL" {
		return false
	}
	amount, err := decimal.NewFromString(fmt.Sprint(body["amount"]))
	if err != nil {
		return false
	}
	for _, op := range f.ops {
		if op.product == productRefund && op.body["referenceIdToRefund"] == colRef && op.final != "FAILED" {
			prior, err := decimal.NewFromString(fmt.Sprint(op.body["amount"]))
			if err != nil {
				return false
			}
			amount = amount.Add(prior)
		}
	}
	total, err := decimal.NewFromString(fmt.Sprint(col.body["amount"]))
	return err == nil && amount.LessThanOrEqual(total)
}
