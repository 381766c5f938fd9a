package dashboard

import (
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// paymentLinkFields are the fields of the payment link form, named as POST /payment-links/
// names them.
var paymentLinkFields = []string{"name", "description", "amount_type", "amount", "min_amount", "currency", "country", "usage_limit", "is_active"}

// paymentLinksData is the list of payment links.
type paymentLinksData struct {
	Links []sika.PaymentLink
	Total int
}

// paymentLinkData is a link's page (or the creation form, without Link).
type paymentLinkData struct {
	Link         *sika.PaymentLink
	Transactions []sika.Transaction
	Form         *formState
	Countries    []option
	Currencies   []option
	Notice       string
}

// paymentLinks lists the environment's payment links, newest first (GET /payment-links/).
func (a *App) paymentLinks(w http.ResponseWriter, r *http.Request, v *visit) error {
	links, total, err := a.cfg.Store.ListPaymentLinks(r.Context(), v.merchant.ID, v.env, store.PageRequest{Page: 1, PageSize: moneyListSize})
	if err != nil {
		return err
	}
	return a.render(w, r, http.StatusOK, "payment_links", &view{visit: v, Title: "links_title", Nav: "payment-links",
		Data: paymentLinksData{Links: links, Total: total}})
}

// newPaymentLink shows the creation form, in the merchant's country and currency.
func (a *App) newPaymentLink(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(map[string]string{"amount_type": string(sika.AmountFixed), "country": v.merchant.Country, "is_active": "true"})
	return a.paymentLinkForm(w, r, v, nil, f)
}

// paymentLinkForm renders the creation form, or a link's page with its edit form.
func (a *App) paymentLinkForm(w http.ResponseWriter, r *http.Request, v *visit, link *sika.PaymentLink, f *formState) error {
	d := paymentLinkData{Link: link, Form: f}
	c, err := a.countryChoices(r)
	if err != nil {
		return err
	}
	d.Countries, d.Currencies = c.Countries, c.Currencies
	if f.Val("currency") == "" {
		f.Values["currency"] = c.CurrencyOf[f.Val("country")]
	}
	if link == nil {
		return a.render(w, r, f.Status, "payment_link", &view{visit: v, Title: "link_new_title", Nav: "payment-links", Data: d})
	}
	d.Transactions, _, err = a.cfg.Store.ListLinkTransactions(r.Context(), link.ID, store.PageRequest{Page: 1, PageSize: moneyListSize})
	if err != nil {
		return err
	}
	if r.URL.Query().Get("saved") == "1" {
		d.Notice = "link_saved"
	}
	return a.render(w, r, f.Status, "payment_link", &view{visit: v, Title: "link_title", Nav: "payment-links", Data: d})
}

// createPaymentLink creates a link by POST /payment-links/ and opens its page.
func (a *App) createPaymentLink(w http.ResponseWriter, r *http.Request, v *visit) error {
	return a.saveLink(w, r, v, nil, newForm(formValues(r, paymentLinkFields...)), http.MethodPost, "/payment-links/")
}

// saveLink sends the link form (paymentLinkBody) by method to the API's path, to create a link
// or edit link, and opens the link's page; what the dashboard or the API refuses is drawn again
// beside the form.
func (a *App) saveLink(w http.ResponseWriter, r *http.Request, v *visit, link *sika.PaymentLink, f *formState, method, path string) error {
	body, ok := paymentLinkBody(v.Lang, f)
	if !ok {
		return a.paymentLinkForm(w, r, v, link, f)
	}
	var saved sika.PaymentLink
	if err := a.call(r, v, method, path, nil, body, "", &saved); err != nil {
		return f.again(v.Lang, err, func() error { return a.paymentLinkForm(w, r, v, link, f) })
	}
	webapp.Redirect(w, r, Prefix+"payment-links/"+saved.ID.String()+"/?saved=1")
	return nil
}

// paymentLink shows a link: its URL to copy, its edit form and the transactions it generated.
func (a *App) paymentLink(w http.ResponseWriter, r *http.Request, v *visit) error {
	link, err := a.ownPaymentLink(r, v)
	if err != nil {
		return err
	}
	return a.paymentLinkForm(w, r, v, &link, newForm(linkValues(link)))
}

// updatePaymentLink writes the edit form by PATCH /payment-links/{id}/.
func (a *App) updatePaymentLink(w http.ResponseWriter, r *http.Request, v *visit) error {
	link, err := a.ownPaymentLink(r, v)
	if err != nil {
		return err
	}
	f := newForm(formValues(r, paymentLinkFields...))
	if f.Val("is_active") == "" {
		f.Values["is_active"] = "false" // an unchecked box is not sent
	}
	return a.saveLink(w, r, v, &link, f, http.MethodPatch, "/payment-links/"+link.ID.String()+"/")
}

// ownPaymentLink is the link of the path, if it is the session's merchant's in its environment.
func (a *App) ownPaymentLink(r *http.Request, v *visit) (sika.PaymentLink, error) {
	id, err := webapp.PathID(r, "Payment link")
	if err != nil {
		return sika.PaymentLink{}, err
	}
	return a.cfg.Store.PaymentLinkByID(r.Context(), v.merchant.ID, v.env, id)
}

// paymentLinkBody is the JSON body of the form: amounts as the API reads them (strings), an
// empty amount or limit sent as null. A usage limit that is not a whole number is the one
// thing said here: JSON could not carry it to the API as a number.
func paymentLinkBody(lang string, f *formState) (map[string]any, bool) {
	body := map[string]any{}
	for _, k := range []string{"name", "description", "amount_type", "currency", "country"} {
		body[k] = f.Val(k)
	}
	for _, k := range []string{"amount", "min_amount"} {
		if val := strings.TrimSpace(f.Val(k)); val != "" {
			body[k] = val
		} else {
			body[k] = nil
		}
	}
	body["usage_limit"] = nil
	if raw := strings.TrimSpace(f.Val("usage_limit")); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil {
			f.Fields["usage_limit"] = translate(lang, "err_min_one")
			f.Alert, f.Code, f.Status = translate(lang, "apierr_validation"), string(sika.CodeValidation), http.StatusBadRequest
			return nil, false
		}
		body["usage_limit"] = n
	}
	body["is_active"] = f.Val("is_active") != "false"
	return body, true
}

// linkValues fills the edit form with a link's fields.
func linkValues(l sika.PaymentLink) map[string]string {
	out := map[string]string{"name": l.Name, "description": l.Description, "amount_type": string(l.AmountType),
		"currency": l.Currency, "country": l.Country, "is_active": strconv.FormatBool(l.IsActive)}
	if l.Amount != nil {
		out["amount"] = l.Amount.StringFixed(2)
	}
	if l.MinAmount != nil {
		out["min_amount"] = l.MinAmount.StringFixed(2)
	}
	if l.UsageLimit != nil {
		out["usage_limit"] = strconv.Itoa(*l.UsageLimit)
	}
	return out
}

// choices are the catalogue's countries and currencies for a form's selects.
type choices struct {
	Countries, Currencies []option
	// CurrencyOf is each country's currency, the default of a form's currency.
	CurrencyOf map[string]string
}

func (a *App) countryChoices(r *http.Request) (choices, error) {
	list, err := a.cfg.Store.ListCountries(r.Context())
	if err != nil {
		return choices{}, err
	}
	c := choices{CurrencyOf: map[string]string{}}
	for _, country := range list {
		c.Countries = append(c.Countries, option{Value: country.ISOCode, Label: translations.Country(webapp.Lang(r), country.ISOCode, country.Name) + " (" + country.DefaultCurrency + ")"})
		if !slices.ContainsFunc(c.Currencies, func(o option) bool { return o.Value == country.DefaultCurrency }) {
			c.Currencies = append(c.Currencies, option{Value: country.DefaultCurrency, Label: country.DefaultCurrency})
		}
		c.CurrencyOf[country.ISOCode] = country.DefaultCurrency
	}
	sort.Slice(c.Countries, func(i, j int) bool { return c.Countries[i].Label < c.Countries[j].Label })
	sort.Slice(c.Currencies, func(i, j int) bool { return c.Currencies[i].Value < c.Currencies[j].Value })
	return c, nil
}

// checkoutFields are the fields of the checkout session form, named as POST
// /checkout-sessions/ names them; expires_in is the form's own choice of a lifetime.
var checkoutFields = []string{"amount", "currency", "customer_name", "customer_email", "customer_phone", "country",
	"description", "return_url", "expires_in"}

// checkoutLifetimes are the lifetimes the form offers (the API bounds them: 5 minutes to 7
// days, 24 hours when absent).
var checkoutLifetimes = []string{"1h", "24h", "72h", "168h"}

// checkoutSessionsData is the list of checkout sessions with the creation form.
type checkoutSessionsData struct {
	Sessions   []sika.CheckoutSession
	Total      int
	Form       *formState
	Created    string // the id of the session just created, to show its URL first
	Countries  []option
	Currencies []option
	Lifetimes  []string
	Notice     string
}

// checkoutSessions lists the environment's checkout sessions, newest first, with the form
// that creates one.
func (a *App) checkoutSessions(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(map[string]string{"country": v.merchant.Country, "expires_in": "24h"})
	d := checkoutSessionsData{Created: r.URL.Query().Get("created")}
	switch {
	case d.Created != "":
		d.Notice = "session_created"
	case r.URL.Query().Get("cancelled") == "1":
		d.Notice = "session_cancelled"
	}
	return a.checkoutSessionsPage(w, r, v, f, d)
}

func (a *App) checkoutSessionsPage(w http.ResponseWriter, r *http.Request, v *visit, f *formState, d checkoutSessionsData) error {
	sessions, total, err := a.cfg.Store.ListCheckoutSessions(r.Context(), v.merchant.ID, v.env, store.CheckoutSessionFilter{},
		store.PageRequest{Page: 1, PageSize: moneyListSize})
	if err != nil {
		return err
	}
	c, err := a.countryChoices(r)
	if err != nil {
		return err
	}
	if f.Val("currency") == "" {
		f.Values["currency"] = c.CurrencyOf[f.Val("country")]
	}
	d.Sessions, d.Total, d.Form, d.Countries, d.Currencies, d.Lifetimes = sessions, total, f, c.Countries, c.Currencies, checkoutLifetimes
	return a.render(w, r, f.Status, "checkout_sessions", &view{visit: v, Title: "sessions_title", Nav: "checkout-sessions", Data: d})
}

// createCheckoutSession creates a session by POST /checkout-sessions/ and lists it first.
func (a *App) createCheckoutSession(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(formValues(r, checkoutFields...))
	body := map[string]any{}
	for _, k := range checkoutFields[:len(checkoutFields)-1] {
		if val := strings.TrimSpace(f.Val(k)); val != "" {
			body[k] = val
		}
	}
	if life, err := time.ParseDuration(f.Val("expires_in")); err == nil && life > 0 {
		body["expires_at"] = a.cfg.Now().UTC().Add(life).Format(time.RFC3339)
	}
	var created sika.CheckoutSession
	if err := a.call(r, v, http.MethodPost, "/checkout-sessions/", nil, body, "", &created); err != nil {
		return f.again(v.Lang, err, func() error { return a.checkoutSessionsPage(w, r, v, f, checkoutSessionsData{}) })
	}
	webapp.Redirect(w, r, Prefix+"checkout-sessions/?created="+created.ID.String())
	return nil
}

// cancelCheckoutSession cancels a PENDING session by POST /checkout-sessions/{id}/cancel/; a
// session of another merchant is not found, one no longer PENDING is said above the list.
func (a *App) cancelCheckoutSession(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Checkout session")
	if err != nil {
		return err
	}
	if err := a.call(r, v, http.MethodPost, "/checkout-sessions/"+id.String()+"/cancel/", nil, nil, "", nil); err != nil {
		f := newForm(map[string]string{"country": v.merchant.Country, "expires_in": "24h"})
		return f.again(v.Lang, err, func() error { return a.checkoutSessionsPage(w, r, v, f, checkoutSessionsData{}) })
	}
	webapp.Redirect(w, r, Prefix+"checkout-sessions/?cancelled=1")
	return nil
}
