package console

import (
	"net/http"
	"strings"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// visit is one request: its language and, signed in, the staff member and session.
type visit struct {
	lang      string
	tokenHash []byte
	session   store.WebSession
	member    sika.Member
}

// handler serves a request of a visit; an error is rendered by fail.
type handler func(w http.ResponseWriter, r *http.Request, v *visit) error

// public serves a page that needs no session (the login form).
func (a *App) public(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.cfg.RouteMatched(r)
		v := &visit{lang: webapp.Lang(r)}
		if err := h(w, r, v); err != nil {
			a.fail(w, r, v, err)
		}
	})
}

// staff serves a page of a signed-in staff member. Without a console session: to the login
// form. A merchant's dashboard session (its cookie) is refused with 403: staff and merchant
// sessions do not cross. Anything but a GET must carry the session's CSRF token.
func (a *App) staff(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.cfg.RouteMatched(r)
		v := &visit{lang: webapp.Lang(r)}
		found, hadCookie, err := a.loadSession(w, r, v)
		if err != nil {
			a.fail(w, r, v, err)
			return
		}
		if !found {
			if a.merchantSession(r) {
				a.fail(w, r, v, webapp.ErrForbidden)
				return
			}
			a.kit.ToLogin(w, r, hadCookie)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			r.Body = http.MaxBytesReader(w, r.Body, webapp.MaxFormBytes)
			if err := a.kit.CheckCSRF(r, v.session.CSRFToken); err != nil {
				a.fail(w, r, v, err)
				return
			}
		}
		if err := h(w, r, v); err != nil {
			a.fail(w, r, v, err)
		}
	})
}

// staffCan serves a page or action of a staff member whose role allows p (sika.StaffRole.Can);
// another staff member gets 403 with the role it needs.
func (a *App) staffCan(p sika.StaffPermission, h handler) http.Handler {
	return a.staff(func(w http.ResponseWriter, r *http.Request, v *visit) error {
		if !v.member.Can(p) {
			return sika.ErrStaffRole(p)
		}
		return h(w, r, v)
	})
}

// dashboardKit names the dashboard's session cookie, to recognise a merchant's session.
var dashboardKit = webapp.Kit{Prefix: "/dashboard/", App: store.WebAppDashboard, SessionCookie: "sika_dashboard"}

// merchantSession reports whether the request carries a live dashboard session (a merchant's):
// the console answers it 403, not a login form. Its cookie's path is /dashboard/, so a browser
// does not send it here; a client that does is refused all the same.
func (a *App) merchantSession(r *http.Request) bool {
	k := dashboardKit
	k.PublicURL = a.cfg.PublicURL
	hash, ok := k.SessionToken(r)
	if !ok {
		return false
	}
	_, err := a.cfg.Store.WebSessionByToken(r.Context(), store.WebAppDashboard, hash, a.cfg.Now())
	return err == nil
}

// loadSession reads the console session of the request's cookie into v; a member who is no
// longer staff loses it.
func (a *App) loadSession(w http.ResponseWriter, r *http.Request, v *visit) (found, hadCookie bool, err error) {
	ws, hash, found, hadCookie, err := a.kit.LoadSession(w, r, a.cfg.Store)
	if !found || err != nil {
		return false, hadCookie, err
	}
	member, err := a.cfg.Store.MemberByID(r.Context(), ws.Member)
	if err == nil && !member.IsStaff {
		err = sika.NotFound("Member")
	}
	if sika.ErrorCode(err) == sika.CodeNotFound {
		return false, true, a.kit.DropSession(w, r, a.cfg.Store, hash)
	}
	if err != nil {
		return false, true, err
	}
	v.tokenHash, v.session, v.member = hash, ws, member
	return true, true, nil
}

// loginData is what the login form shows.
type loginData struct {
	Email, Next   string
	Error, Notice string
	LoginCSRF     string
}

func (a *App) loginPage(w http.ResponseWriter, r *http.Request, v *visit) error {
	q := r.URL.Query()
	next := a.kit.SafeNext(q.Get("next"))
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

func (a *App) renderLogin(w http.ResponseWriter, r *http.Request, v *visit, status int, d loginData) error {
	d.LoginCSRF = a.kit.NewLoginToken(w, r)
	return a.render(w, r, status, "login", &view{visit: v, Title: "login_title", Data: d})
}

// login checks the form with the API's login rule and budget, admits staff only, and starts a
// console session.
func (a *App) login(w http.ResponseWriter, r *http.Request, v *visit) error {
	r.Body = http.MaxBytesReader(w, r.Body, webapp.MaxFormBytes)
	if err := r.ParseForm(); err != nil {
		return webapp.ErrForbidden
	}
	if err := a.kit.CheckLoginCSRF(r); err != nil {
		return err
	}
	d := loginData{Email: strings.TrimSpace(r.PostForm.Get("email")), Next: a.kit.SafeNext(r.PostForm.Get("next"))}
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
	if !member.IsStaff {
		d.Error = "merchant_refused"
		return a.renderLogin(w, r, v, http.StatusForbidden, d)
	}
	if err := a.kit.EndSession(w, r, a.cfg.Store); err != nil {
		return err
	}
	if _, err := a.kit.StartSession(w, r, a.cfg.Store, store.WebSession{Member: member.ID}, a.cfg.ClientIP(r).String()); err != nil {
		return err
	}
	a.kit.ClearCookie(w, r, a.kit.LoginCookie)
	http.Redirect(w, r, d.Next, http.StatusSeeOther)
	return nil
}

func (a *App) logout(w http.ResponseWriter, r *http.Request, _ *visit) error {
	if err := a.kit.EndSession(w, r, a.cfg.Store); err != nil {
		return err
	}
	webapp.Redirect(w, r, Prefix+"login/?signed_out=1")
	return nil
}
