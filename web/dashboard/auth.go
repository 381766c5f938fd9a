package dashboard

import (
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/webapp"
)

// loginData is what the login form shows.
type loginData struct {
	Email string
	Next  string
	// Error is the key of the message above the form; Notice of a neutral one (signed out,
	// session ended).
	Error  string
	Notice string
	// LoginCSRF is the form's token, the double of the login cookie: there is no session to
	// keep a token in yet, and a forged login (into the attacker's account) is refused too.
	LoginCSRF string
}

// loginPage shows the login form, or sends a member who is signed in on.
func (a *App) loginPage(w http.ResponseWriter, r *http.Request, v *visit) error {
	q := r.URL.Query()
	next := safeNext(q.Get("next"))
	found, _, err := a.loadSession(w, r, &visit{lang: v.lang})
	if err != nil {
		return err
	}
	if found {
		webapp.Redirect(w, r, next)
		return nil
	}
	d := loginData{Next: next}
	switch {
	case q.Get("expired") != "":
		d.Notice = "session_expired"
	case q.Get("signed_out") != "":
		d.Notice = "signed_out"
	}
	return a.renderLogin(w, r, v, http.StatusOK, d)
}

// renderLogin writes the login form with a fresh login token.
func (a *App) renderLogin(w http.ResponseWriter, r *http.Request, v *visit, status int, d loginData) error {
	d.LoginCSRF = a.kit.NewLoginToken(w, r)
	return a.render(w, r, status, "login", &view{visit: v, Title: "login_title", Data: d})
}

// login checks the form with the API's login rule and budget and starts a session.
func (a *App) login(w http.ResponseWriter, r *http.Request, v *visit) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		return errForbidden
	}
	if err := a.kit.CheckLoginCSRF(r); err != nil {
		return err
	}
	d := loginData{Email: strings.TrimSpace(r.PostForm.Get("email")), Next: safeNext(r.PostForm.Get("next"))}
	if err := a.cfg.ThrottleLogin(w, r); err != nil {
		if sika.ErrorCode(err) != sika.CodeRateLimited {
			return err
		}
		d.Error = "too_many_attempts"
		return a.renderLogin(w, r, v, http.StatusTooManyRequests, d)
	}
	password := r.PostForm.Get("password")
	if d.Email == "" || password == "" {
		d.Error = "login_required"
		return a.renderLogin(w, r, v, http.StatusBadRequest, d)
	}
	member, err := a.cfg.CheckPassword(r.Context(), d.Email, password)
	if sika.ErrorCode(err) == sika.CodeInvalidCredentials {
		d.Error = "wrong_credentials"
		return a.renderLogin(w, r, v, http.StatusUnauthorized, d)
	}
	if sika.ErrorCode(err) == sika.CodeRateLimited { // the account waits after failed logins
		d.Error = "too_many_attempts"
		return a.renderLogin(w, r, v, http.StatusTooManyRequests, d)
	}
	if err != nil {
		return err
	}
	if member.IsStaff {
		d.Error = "staff_refused"
		return a.renderLogin(w, r, v, http.StatusForbidden, d)
	}
	merchants, err := a.cfg.Store.MemberMerchants(r.Context(), member.ID)
	if err != nil {
		return err
	}
	// The browser's previous session, if any, ends: one login, one new session.
	if err := a.kit.EndSession(w, r, a.cfg.Store); err != nil {
		return err
	}
	if err := a.startSession(w, r, member, merchants); err != nil {
		return err
	}
	a.kit.ClearCookie(w, r, loginCSRFCookie)
	next := d.Next
	if len(merchants) > 1 && next == Prefix {
		next = Prefix + "merchants/"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// logout ends the session.
func (a *App) logout(w http.ResponseWriter, r *http.Request, _ *visit) error {
	if err := a.kit.EndSession(w, r, a.cfg.Store); err != nil {
		return err
	}
	webapp.Redirect(w, r, Prefix+"login/?signed_out=1")
	return nil
}

// merchantPicker lists the member's merchants to act for.
func (a *App) merchantPicker(w http.ResponseWriter, r *http.Request, v *visit) error {
	return a.render(w, r, http.StatusOK, "merchants", &view{visit: v, Title: "merchants_title", Nav: "merchants"})
}

// pickMerchant makes the session act for one of the member's merchants, in the environment the
// merchant lands in; another merchant's id is not found.
func (a *App) pickMerchant(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := uuid.Parse(strings.TrimSpace(r.PostFormValue("merchant")))
	if err != nil {
		return sika.NotFound("Merchant")
	}
	for i := range v.merchants {
		if v.merchants[i].ID == id {
			if err := a.actFor(r, v, &v.merchants[i], defaultEnvironment(v.merchants[i].Merchant)); err != nil {
				return err
			}
			webapp.Redirect(w, r, Prefix)
			return nil
		}
	}
	return sika.NotFound("Merchant")
}

// switchEnvironment moves the session between TEST and LIVE and returns to the page it was on.
func (a *App) switchEnvironment(w http.ResponseWriter, r *http.Request, v *visit) error {
	env := sika.Environment(strings.ToUpper(strings.TrimSpace(r.PostFormValue("environment"))))
	if !env.Valid() {
		return sika.FieldError("environment", "Must be TEST or LIVE.")
	}
	if err := a.actFor(r, v, v.merchant, env); err != nil {
		return err
	}
	webapp.Redirect(w, r, safeNext(r.PostFormValue("next")))
	return nil
}
