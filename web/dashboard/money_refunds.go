package dashboard

import (
	"context"
	"errors"
	"net/http"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/webapp"
)

// RefundQuoteRequest is the refund form, as Config.QuoteRefund prices it (the fields of POST
// /refunds/): Amount "" is all that is left to refund.
type RefundQuoteRequest struct {
	Transaction uuid.UUID
	Amount      string
}

// RefundQuote is what a refund would do: its price (Fees: the amount the customer gets back,
// the fee, what leaves the wallet), what is left to refund of the collection before it, and
// whether the operator's own refund carries it (else a payout to the payer's number).
type RefundQuote struct {
	Fees        sika.Fees
	Left        decimal.Decimal
	ViaOperator bool
}

// refundFields are the refund form's fields.
var refundFields = []string{"amount", "reason"}

// refundOffer is the refund form of a collection's page: what is left to refund (prefilled), or
// why nothing can be.
type refundOffer struct {
	Left decimal.Decimal
	// Refused is the API's refusal of any refund of the collection (refund_unavailable), shown
	// in place of the form.
	Refused string
}

// refundConfirmData is the preview of a refund, with the form that sends it under the
// Idempotency-Key made now.
type refundConfirmData struct {
	Transaction sika.TransactionDetail
	Form        *formState
	Quote       RefundQuote
}

// offerRefund prepares the refund form of a successful collection not yet wholly refunded, by
// the API's rule (Config.QuoteRefund without an amount: what is left).
func (a *App) offerRefund(ctx context.Context, v *visit, d *transactionData) error {
	if !d.Refundable() || a.cfg.QuoteRefund == nil {
		return nil
	}
	q, err := a.cfg.QuoteRefund(ctx, v.merchant.ID, v.env, RefundQuoteRequest{Transaction: d.ID})
	switch {
	case err == nil:
	case sika.ErrorCode(err) == sika.CodeRefundExceedsPayment: // nothing left: succeeded and in-flight refunds took it all
		return nil
	case refusedRefund(err) != "":
		d.Refund = &refundOffer{Refused: refusedRefund(err)}
		return nil
	default:
		return err
	}
	d.Refund = &refundOffer{Left: q.Left}
	if d.Form.Val("amount") == "" {
		d.Form.Values["amount"] = q.Left.StringFixed(sika.MinorUnits(d.Currency))
	}
	return nil
}

// previewRefund prices the refund form (Config.QuoteRefund) and shows what the customer gets
// back, the fee and what leaves the wallet before the merchant confirms; a refused form comes
// back on the transaction's page with the API's errors.
func (a *App) previewRefund(w http.ResponseWriter, r *http.Request, v *visit) error {
	t, err := a.actionTransaction(r, v)
	if err != nil {
		return err
	}
	f := newForm(formValues(r, refundFields...))
	q, err := a.cfg.QuoteRefund(r.Context(), v.merchant.ID, v.env, RefundQuoteRequest{Transaction: t.ID, Amount: f.Val("amount")})
	if err != nil {
		return a.transactionRefused(w, r, v, t, f, err)
	}
	f.IdempotencyKey = newIdempotencyKey()
	return a.render(w, r, http.StatusOK, "refund_confirm", &view{visit: v, Title: "refund_confirm_title", Nav: "transactions",
		Data: refundConfirmData{Transaction: t, Form: f, Quote: q}})
}

// sendRefund sends the confirmed refund by POST /refunds/ with the preview's Idempotency-Key
// and opens the refund's page; "change" goes back to the collection's page with the form as
// filled.
func (a *App) sendRefund(w http.ResponseWriter, r *http.Request, v *visit) error {
	t, err := a.actionTransaction(r, v)
	if err != nil {
		return err
	}
	f := newForm(formValues(r, refundFields...))
	if r.PostFormValue("change") != "" {
		return a.transactionRefused(w, r, v, t, f, nil)
	}
	body := map[string]string{"transaction": t.ID.String(), "amount": f.Val("amount"), "reason": f.Val("reason")}
	var refund sika.Transaction
	if err := a.callMoving(r, v, http.MethodPost, "/refunds/", body, r.PostFormValue("idempotency_key"), &refund); err != nil {
		return a.transactionRefused(w, r, v, t, f, err)
	}
	webapp.Redirect(w, r, Prefix+"transactions/"+refund.ID.String()+"/")
	return nil
}

// refusedRefund is the API's message when it refuses any refund of a collection (no way to
// refund on its network, a wallet that cannot pay or is frozen), "" for other errors.
func refusedRefund(err error) string {
	var e *sika.Error
	if errors.As(err, &e) && (e.Code == sika.CodeRefundUnavailable || e.Code == sika.CodeInsufficientBalance || e.Code == sika.CodeWalletFrozen) {
		return e.Message
	}
	return ""
}
