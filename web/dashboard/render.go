package dashboard

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/webapp"
)

// pageNames are the page templates; each is parsed with layout.html, which frames it.
var pageNames = slices.Concat([]string{"login", "merchants", "home", "transactions", "transaction", "error"}, moneyPages, developerPages)

// view is what every page template is given: the visit (language, member, merchant,
// environment), the page's own Data, and helpers that format for the page's language.
type view struct {
	*visit
	// Title and Nav are translation keys: the page title, and the menu entry to mark current.
	Title string
	Nav   string
	Data  any
	r     *http.Request
}

// Lang is the page language ("fr" or "en").
func (v *view) Lang() string { return v.lang }

// T is the page's text for a key.
func (v *view) T(key string) string { return translate(v.lang, key) }

// Money is an amount as people in the region read it, in the page's language.
func (v *view) Money(a sika.Amount, currency string) string {
	return formatMoney(a.Decimal, currency, v.lang)
}

// TxAmount is a transaction's amount, negative when money leaves the wallet (a payout).
func (v *view) TxAmount(t sika.Transaction) string {
	if t.FlowDirection == sika.DirectionOutbound {
		return formatMoney(t.Amount.Neg(), t.Currency, v.lang)
	}
	return formatMoney(t.Amount.Decimal, t.Currency, v.lang)
}

// When is a date and time in the page's language, in UTC (the ledger's clock).
func (v *view) When(t time.Time) string { return formatTime(t, v.lang) }

// WhenPtr is When for an optional time ("—" when absent).
func (v *view) WhenPtr(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return formatTime(*t, v.lang)
}

// ISO is a time as the datetime attribute of <time> wants it.
func (v *view) ISO(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// CSRF is the session's token, for forms and the htmx header.
func (v *view) CSRF() string { return v.session.CSRFToken }

// HXHeaders is the hx-headers attribute of the body: every htmx request carries the token.
func (v *view) HXHeaders() string { return `{"` + csrfHeader + `":"` + v.session.CSRFToken + `"}` }

// SignedIn reports whether the page belongs to a session (it shows the menu).
func (v *view) SignedIn() bool { return v.tokenHash != nil }

// Merchant is the merchant acted for (nil before one is picked).
func (v *view) Merchant() *sika.MerchantMembership { return v.merchant }

// Merchants are the member's merchants.
func (v *view) Merchants() []sika.MerchantMembership { return v.merchants }

// Member is the signed-in member.
func (v *view) Member() sika.Member { return v.member }

// Env is the environment acted in.
func (v *view) Env() string { return string(v.env) }

// Test reports whether the page shows TEST data.
func (v *view) Test() bool { return v.env == sika.EnvironmentTest }

// OtherEnv is the environment the switch goes to.
func (v *view) OtherEnv() string {
	if v.env == sika.EnvironmentTest {
		return string(sika.EnvironmentLive)
	}
	return string(sika.EnvironmentTest)
}

// Here is the page's own path and query, where forms come back to.
func (v *view) Here() string { return v.r.URL.RequestURI() }

// SwitchLang is this page in the other language.
func (v *view) SwitchLang() string { return webapp.SwitchLangURL(v.r, v.lang) }

// StatusLabel is a transaction status in the page's language.
func (v *view) StatusLabel(status sika.TransactionStatus) string {
	return v.T("status_" + string(status))
}

// StatusClass is the CSS class of a status badge.
func (v *view) StatusClass(status sika.TransactionStatus) string {
	switch status {
	case sika.StatusSuccess:
		return "badge ok"
	case sika.StatusFailed, sika.StatusCancelled:
		return "badge ko"
	}
	return "badge wait"
}

// render writes a whole page, or with block the named part of it alone (an htmx swap).
func (a *App) render(w http.ResponseWriter, r *http.Request, status int, page string, v *view) error {
	return a.renderBlock(w, r, status, page, "layout", v)
}

func (a *App) renderBlock(w http.ResponseWriter, r *http.Request, status int, page, block string, v *view) error {
	v.r = r
	return webapp.Render(w, status, a.pages[page], block, v)
}

// errorData is what the error page says.
type errorData struct {
	Status  int
	Message string // translation key
}

// fail answers a handler's error with the error page: 403 for a request that did not verify,
// 404 for what is not the merchant's (or does not exist), 400 for a bad form, 429, and 500
// (logged) for anything else.
func (a *App) fail(w http.ResponseWriter, r *http.Request, v *visit, err error) {
	status, key, internal := webapp.ErrorPage(err)
	d := errorData{Status: status, Message: key}
	if internal {
		a.cfg.Logger.ErrorContext(r.Context(), "dashboard", "path", r.URL.Path, "err", err)
	}
	if rerr := a.render(w, r, d.Status, "error", &view{visit: v, Title: d.Message, Data: d}); rerr != nil {
		a.cfg.Logger.ErrorContext(r.Context(), "dashboard error page", "err", rerr)
		http.Error(w, http.StatusText(d.Status), d.Status)
	}
}

// notFound answers a path the dashboard does not have.
func (a *App) notFound(w http.ResponseWriter, r *http.Request) {
	a.fail(w, r, &visit{lang: webapp.Lang(r)}, sika.NotFound("Page"))
}

func (a *App) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	d := errorData{http.StatusMethodNotAllowed, "error_method"}
	if err := a.render(w, r, d.Status, "error", &view{visit: &visit{lang: webapp.Lang(r)}, Title: d.Message, Data: d}); err != nil {
		http.Error(w, http.StatusText(d.Status), d.Status)
	}
}

// query is a dashboard URL with a query string (none when empty).
func query(path string, q url.Values) string { return webapp.Query(path, q) }

// IsCurrent reports whether id is the merchant acted for.
func (v *view) IsCurrent(id uuid.UUID) bool { return v.merchant != nil && v.merchant.ID == id }

// AttemptClass is the CSS class of an attempt's status badge.
func (v *view) AttemptClass(status sika.AttemptStatus) string {
	switch status {
	case sika.AttemptSuccess:
		return "badge ok"
	case sika.AttemptFailed:
		return "badge ko"
	}
	return "badge wait"
}

// txTable is a table of transactions with the view that formats it.
type txTable struct {
	V    *view
	Rows []sika.Transaction
}

// Table pairs rows with the view, for the txrows template.
func (v *view) Table(rows []sika.Transaction) txTable { return txTable{V: v, Rows: rows} }

// selectField is one select of the filter form.
type selectField struct {
	Name, Label, All, Value, Error string
	Options                        []option
}

// Select describes the filter select of a query parameter, with its current value and error.
func (v *view) Select(name, labelKey string, opts []option) selectField {
	f := selectField{Name: name, Label: v.T(labelKey), All: v.T("all"), Options: opts}
	if d, ok := v.Data.(*transactionsData); ok {
		f.Value = strings.ToUpper(d.Form[name])
		if key := d.Errors[name]; key != "" {
			f.Error = v.T(key)
		}
	}
	return f
}
