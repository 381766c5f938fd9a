package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// transactionActions is what a transaction's page offers beyond its record: the webhook
// deliveries of its events, its invoice, and the verify and retry buttons where the API
// allows them (sika.Transaction.HasInvoice, Retryable; verify: a PENDING payment or payout).
type transactionActions struct {
	Deliveries []store.TransactionDelivery
	// Form carries the retry's Idempotency-Key and what the API answered to verify or retry.
	Form   *formState
	Notice string // translation key of what was done
	// Refund is the refund form of a successful collection with something left to refund
	// (money_refunds.go); nil otherwise.
	Refund *refundOffer
	// ApprovalExpiresAt is when a payout that waits for approval stops waiting (FAILED
	// approval_expired); nil otherwise.
	ApprovalExpiresAt *time.Time
}

// CanVerify reports whether the page offers to ask the operator again: a payment or payout
// still PENDING (a transfer between wallets is never pending; a refund has no verify route).
func (d transactionData) CanVerify() bool {
	return d.Status == sika.StatusPending && d.Type != sika.TypeTransfer && d.Type != sika.TypeRefund
}

// CanDecide reports whether the page offers to approve or reject: a payout over the merchant's
// approval threshold that waits for a second member (the API refuses its creator).
func (d transactionData) CanDecide() bool { return d.Status == sika.StatusAwaitingApproval }

// transactionExtras reads the deliveries of the transaction's events and prepares its forms.
func (a *App) transactionExtras(r *http.Request, v *visit, d *transactionData) error {
	deliveries, err := a.cfg.Store.TransactionDeliveries(r.Context(), v.merchant.ID, v.env, d.ID)
	if err != nil {
		return err
	}
	d.Deliveries = deliveries
	if d.Form == nil {
		d.Form = newForm(map[string]string{"customer_phone": "", "amount": "", "reason": ""})
	}
	if d.Form.IdempotencyKey == "" {
		d.Form.IdempotencyKey = newIdempotencyKey()
	}
	if err := a.offerRefund(r.Context(), v, d); err != nil {
		return err
	}
	if d.CanDecide() {
		approval, err := a.cfg.Store.PayoutApprovalOf(r.Context(), d.ID)
		if err != nil {
			return err
		}
		d.ApprovalExpiresAt = &approval.ExpiresAt
	}
	switch {
	case r.URL.Query().Get("verified") == "1":
		d.Notice = "verified_notice"
	case r.URL.Query().Get("retried") == "1":
		d.Notice = "retried_notice"
	case r.URL.Query().Get("decided") == "approve":
		d.Notice = "approved_notice"
	case r.URL.Query().Get("decided") == "reject":
		d.Notice = "rejected_notice"
	}
	return nil
}

// actionTransaction is the merchant's transaction a form acts on (another merchant's, or the
// other environment's, is not found).
func (a *App) actionTransaction(r *http.Request, v *visit) (sika.TransactionDetail, error) {
	id, err := webapp.PathID(r, "Transaction")
	if err != nil {
		return sika.TransactionDetail{}, err
	}
	return a.cfg.Store.TransactionDetail(r.Context(), v.merchant.ID, v.env, id)
}

// verifyTransaction asks the operator about the transaction again, by GET /payments/{id}/verify/
// or GET /payouts/{id}/verify/, and shows the page again with what the API recorded.
func (a *App) verifyTransaction(w http.ResponseWriter, r *http.Request, v *visit) error {
	t, err := a.actionTransaction(r, v)
	if err != nil {
		return err
	}
	path := "/payments/" + t.ID.String() + "/verify/"
	if t.FlowDirection == sika.DirectionOutbound {
		path = "/payouts/" + t.ID.String() + "/verify/"
	}
	if err := a.call(r, v, http.MethodGet, path, nil, nil, "", nil); err != nil {
		return a.transactionRefused(w, r, v, t, newForm(nil), err)
	}
	webapp.Redirect(w, r, Prefix+"transactions/"+t.ID.String()+"/?verified=1")
	return nil
}

// decideTransaction approves or rejects a payout that waits for a second member, by POST
// /payouts/{id}/approve/ or /reject/; a refusal (its creator deciding, a role that may not, an
// approval that expired) is shown on the page.
func (a *App) decideTransaction(action string) handler {
	return func(w http.ResponseWriter, r *http.Request, v *visit) error {
		t, err := a.actionTransaction(r, v)
		if err != nil {
			return err
		}
		body := map[string]string{"note": strings.TrimSpace(r.PostFormValue("note"))}
		if err := a.call(r, v, http.MethodPost, "/payouts/"+t.ID.String()+"/"+action+"/", nil, body, "", nil); err != nil {
			return a.transactionRefused(w, r, v, t, newForm(nil), err)
		}
		webapp.Redirect(w, r, Prefix+"transactions/"+t.ID.String()+"/?decided="+action)
		return nil
	}
}

// retryTransaction retries a FAILED payment (POST /payments/{id}/retry/) with the page's
// Idempotency-Key, optionally at another number of the customer.
func (a *App) retryTransaction(w http.ResponseWriter, r *http.Request, v *visit) error {
	t, err := a.actionTransaction(r, v)
	if err != nil {
		return err
	}
	f := newForm(formValues(r, "customer_phone"))
	f.IdempotencyKey = r.PostFormValue("idempotency_key")
	body := map[string]string{}
	if phone := f.Val("customer_phone"); phone != "" {
		body["customer_phone"] = phone
	}
	if err := a.callMoving(r, v, http.MethodPost, "/payments/"+t.ID.String()+"/retry/", body, f.IdempotencyKey, nil); err != nil {
		return a.transactionRefused(w, r, v, t, f, err)
	}
	webapp.Redirect(w, r, Prefix+"transactions/"+t.ID.String()+"/?retried=1")
	return nil
}

// transactionRefused shows the transaction's page again with the API's refusal beside its
// buttons.
func (a *App) transactionRefused(w http.ResponseWriter, r *http.Request, v *visit, t sika.TransactionDetail, f *formState, err error) error {
	return f.again(v.Lang, err, func() error { return a.transactionPage(w, r, v, t, f) })
}

// transactionPage draws a transaction's page (its deliveries, forms and notices:
// transactionExtras) with f, the form of its actions as sent, and f's status; nil for a fresh
// one.
func (a *App) transactionPage(w http.ResponseWriter, r *http.Request, v *visit, t sika.TransactionDetail, f *formState) error {
	names, err := a.countryNames(r)
	if err != nil {
		return err
	}
	d := transactionData{TransactionDetail: t, CountryName: names[t.Country]}
	d.Form = f
	if err := a.transactionExtras(r, v, &d); err != nil {
		return err
	}
	return a.render(w, r, d.Form.Status, "transaction", &view{visit: v, Title: "transaction_title", Nav: "transactions", Data: d})
}

// transactionInvoice hands over the PDF invoice the API renders (GET /transactions/{id}/invoice/),
// in the page's language. A transaction without one (sika.Transaction.HasInvoice) is not found
// here: the page shows no link to it.
func (a *App) transactionInvoice(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Transaction")
	if err != nil {
		return err
	}
	err = a.download(w, r, v, "/transactions/"+id.String()+"/invoice/", url.Values{"lang": {v.Lang}})
	if sika.ErrorCode(err) == sika.CodeInvoiceUnavailable {
		return sika.NotFound("Invoice")
	}
	return err
}

// download hands over a file the API answers for the visit's merchant and environment (an
// invoice, a batch's results) with its type, name and language; the API's refusal is returned
// as its error, before anything is written.
func (a *App) download(w http.ResponseWriter, r *http.Request, v *visit, path string, q url.Values) error {
	ans, err := a.cfg.API(r, webapp.APICall{Member: v.Member, Merchant: v.merchant.ID, Environment: v.env,
		Method: http.MethodGet, Path: path, Query: q})
	if err != nil {
		return err
	}
	if ans.Status != http.StatusOK {
		return ans.Decode(nil)
	}
	h := w.Header()
	for _, k := range []string{"Content-Type", "Content-Disposition", "Content-Language"} {
		if val := ans.Header.Get(k); val != "" {
			h.Set(k, val)
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(ans.Body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(ans.Body)
	return nil
}
