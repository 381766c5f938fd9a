package console

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/webapp"
)

// view is what every page template is given: the visit, the page's Data, and helpers that
// format for the page's language.
type view struct {
	*visit
	Title string
	Nav   string
	Data  any
	// Flash is the key of a message about the action just done (shown once, role=status).
	Flash string
	r     *http.Request
}

func (v *view) Lang() string        { return v.lang }
func (v *view) T(key string) string { return translate(v.lang, key) }

// Money is an amount through sika.FormatMoney, the one formatting of every page.
func (v *view) Money(a sika.Amount, currency string) string {
	return sika.FormatMoney(a.Decimal, currency, v.lang)
}

// TxAmount is a transaction's amount, negative when money leaves the wallet (a payout).
func (v *view) TxAmount(t sika.Transaction) string {
	if t.FlowDirection == sika.DirectionOutbound {
		return sika.FormatMoney(t.Amount.Neg(), t.Currency, v.lang)
	}
	return sika.FormatMoney(t.Amount.Decimal, t.Currency, v.lang)
}

func (v *view) When(t time.Time) string { return webapp.FormatTime(t, v.lang) }
func (v *view) WhenPtr(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return webapp.FormatTime(*t, v.lang)
}
func (v *view) ISO(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Since is how long ago t was, rounded to the minute ("3h05m", "12m").
func (v *view) Since(t time.Time) string {
	d := v.now().Sub(t).Round(time.Minute)
	if d < time.Minute {
		return "<1m"
	}
	s := d.String()
	return s[:len(s)-2] // "1h5m0s" → "1h5m"
}

func (v *view) now() time.Time { return time.Now() }

func (v *view) CSRF() string { return v.session.CSRFToken }
func (v *view) HXHeaders() string {
	return `{"` + webapp.CSRFHeader + `":"` + v.session.CSRFToken + `"}`
}
func (v *view) SignedIn() bool { return v.tokenHash != nil }
func (v *view) Member() sika.Member {
	return v.member
}

// Can reports whether the signed-in member's role allows p ("reverify", "review_kyc", …): the
// pages show only the actions it allows (the routes check it again).
func (v *view) Can(p string) bool { return v.member.Can(sika.StaffPermission(p)) }

// Role is the member's staff role, in the page's language.
func (v *view) Role() string       { return v.T("role_" + string(v.member.StaffRole)) }
func (v *view) Here() string       { return v.r.URL.RequestURI() }
func (v *view) SwitchLang() string { return webapp.SwitchLangURL(v.r, v.lang) }

func (v *view) StatusLabel(status sika.TransactionStatus) string {
	return v.T("status_" + string(status))
}

// StatusClass is the CSS class of a status badge.
func (v *view) StatusClass(status string) string {
	switch status {
	case string(sika.StatusSuccess), string(sika.KYCDossierApproved):
		return "badge ok"
	case string(sika.StatusFailed), string(sika.StatusCancelled), string(sika.KYCDossierRejected):
		return "badge ko"
	}
	return "badge wait"
}

// JSON is a staff action's detail as text.
func (v *view) JSON(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "{}" {
		return ""
	}
	return string(raw)
}

// render writes a whole page.
func (a *App) render(w http.ResponseWriter, r *http.Request, status int, page string, v *view) error {
	v.r = r
	return webapp.Render(w, status, a.pages[page], "layout", v)
}

// renderBlock writes the named part of a page (an htmx swap).
func (a *App) renderBlock(w http.ResponseWriter, r *http.Request, status int, page, block string, v *view) error {
	v.r = r
	return webapp.Render(w, status, a.pages[page], block, v)
}

type errorData struct {
	Status  int
	Message string
	// Detail is the service's own message of a refused action (a conflict, a bad reason).
	Detail string
}

// fail answers a handler's error with the error page (webapp.ErrorPage); an action the
// service refused (not pending, a validation message) shows its message with 409 or 400.
func (a *App) fail(w http.ResponseWriter, r *http.Request, v *visit, err error) {
	status, key, internal := webapp.ErrorPage(err)
	d := errorData{Status: status, Message: key}
	var se *sika.Error
	isService := errors.As(err, &se)
	if isService && status == http.StatusBadRequest {
		d.Detail = se.Error()
	}
	if isService && (se.Code == sika.CodeRoleForbidden || se.Code == sika.CodeSelfApprovalForbidden) {
		// The staff role's limits and the two-person rule, in the page's language.
		d, internal = errorData{Status: http.StatusForbidden, Message: "error_" + string(se.Code)}, false
	}
	if internal {
		if isService && se.Code != "" && se.Code != sika.CodeInternal {
			// A refusal of the service's rules (not_pending, admin_only, service_unavailable).
			d = errorData{Status: http.StatusConflict, Message: "error_refused", Detail: se.Message}
			if se.Code == sika.CodeServiceUnavailable {
				d.Status = http.StatusServiceUnavailable
			}
		} else {
			a.cfg.Logger.ErrorContext(r.Context(), "console", "path", r.URL.Path, "err", err)
		}
	}
	if rerr := a.render(w, r, d.Status, "error", &view{visit: v, Title: d.Message, Data: d}); rerr != nil {
		a.cfg.Logger.ErrorContext(r.Context(), "console error page", "err", rerr)
		http.Error(w, http.StatusText(d.Status), d.Status)
	}
}

func (a *App) notFound(w http.ResponseWriter, r *http.Request) {
	a.fail(w, r, &visit{lang: webapp.Lang(r)}, sika.NotFound("Page"))
}

func (a *App) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	d := errorData{Status: http.StatusMethodNotAllowed, Message: "error_method"}
	if err := a.render(w, r, d.Status, "error", &view{visit: &visit{lang: webapp.Lang(r)}, Title: d.Message, Data: d}); err != nil {
		http.Error(w, http.StatusText(d.Status), d.Status)
	}
}

// rowsOf pairs rows with the view, for the shared row templates (attempts, actions, txlist).
type rowsOf struct {
	V    *view
	Rows any
}

// RowsOf pairs rows with the view.
func (v *view) RowsOf(rows any) rowsOf { return rowsOf{V: v, Rows: rows} }
