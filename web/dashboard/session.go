package dashboard

import (
	"mime/multipart"
	"net/http"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// app is the web app these sessions belong to: the console's are never accepted here.
const app = store.WebAppDashboard

// Cookie names. Over TLS they carry the __Secure- prefix, which browsers accept only from a
// secure origin with the Secure attribute.
const (
	sessionCookie   = "sika_dashboard"
	loginCSRFCookie = "sika_dashboard_login"
	csrfHeader      = webapp.CSRFHeader
	maxFormBytes    = webapp.MaxFormBytes
)

// visit is one request of a member: its session, its merchants and, on merchant pages, the
// merchant and environment it acts in. Public pages have a visit with only a language.
type visit struct {
	lang string
	// tokenHash identifies the session (nil on public pages).
	tokenHash []byte
	session   store.WebSession
	member    sika.Member
	merchants []sika.MerchantMembership
	merchant  *sika.MerchantMembership
	env       sika.Environment
	// parts is the multipart body of an upload (forUpload), its CSRF token already checked.
	parts *multipart.Reader
}

// handler serves a request of a visit; an error is rendered by fail.
type handler func(w http.ResponseWriter, r *http.Request, v *visit) error

// errForbidden refuses a request whose CSRF token or origin does not check.
var errForbidden = webapp.ErrForbidden

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

// signedIn serves a page of a signed-in member, who may not have picked a merchant yet.
func (a *App) signedIn(h handler) http.Handler { return a.withSession(h, false) }

// forMerchant serves a page that shows a merchant's data: without a merchant picked, the member
// is sent to the picker.
func (a *App) forMerchant(h handler) http.Handler { return a.withSession(h, true) }

// forUpload serves a multipart POST of a merchant that carries a file (a KYC document): its body
// may be as large as the API's upload takes (webapp.MaxUploadBytes), and it is streamed to h as
// v.parts, never read whole. Its CSRF token is checked as any form's: in the X-CSRF-Token header,
// or in the csrf_token field, which must then be the body's first part (the form puts it first),
// so the token is known before any of the file is read.
func (a *App) forUpload(h handler) http.Handler { return a.session(h, true, true) }

// withSession resolves the session of the request (no session: to the login page), checks the
// CSRF token of anything but a GET, and runs h.
func (a *App) withSession(h handler, needMerchant bool) http.Handler {
	return a.session(h, needMerchant, false)
}

// session is withSession, for a form (upload false) or a streamed upload (forUpload).
func (a *App) session(h handler, needMerchant, upload bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.cfg.RouteMatched(r)
		v := &visit{lang: webapp.Lang(r)}
		found, hadCookie, err := a.loadSession(w, r, v)
		if err != nil {
			a.fail(w, r, v, err)
			return
		}
		if !found {
			a.kit.ToLogin(w, r, hadCookie)
			return
		}
		switch {
		case upload:
			r.Body = http.MaxBytesReader(w, r.Body, webapp.MaxUploadBytes)
			if v.parts, err = a.kit.CheckUploadCSRF(r, v.session.CSRFToken); err != nil {
				a.fail(w, r, v, err)
				return
			}
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
			if err := a.kit.CheckCSRF(r, v.session.CSRFToken); err != nil {
				a.fail(w, r, v, err)
				return
			}
		}
		if needMerchant && v.merchant == nil {
			webapp.Redirect(w, r, Prefix+"merchants/")
			return
		}
		if err := h(w, r, v); err != nil {
			a.fail(w, r, v, err)
		}
	})
}

// loadSession reads the session of the request's cookie into v. found is false without a live
// dashboard session of a member who is not staff; hadCookie tells an ended session from none.
func (a *App) loadSession(w http.ResponseWriter, r *http.Request, v *visit) (found, hadCookie bool, err error) {
	ws, hash, found, hadCookie, err := a.kit.LoadSession(w, r, a.cfg.Store)
	if !found || err != nil {
		return false, hadCookie, err
	}
	ctx := r.Context()
	member, err := a.cfg.Store.MemberByID(ctx, ws.Member)
	if err == nil && member.IsStaff {
		// Staff sign in to the console; a member made staff since loses this session.
		err = sika.NotFound("Member")
	}
	if sika.ErrorCode(err) == sika.CodeNotFound {
		return false, true, a.kit.DropSession(w, r, a.cfg.Store, hash)
	}
	if err != nil {
		return false, true, err
	}
	merchants, err := a.cfg.Store.MemberMerchants(ctx, member.ID)
	if err != nil {
		return false, true, err
	}
	v.tokenHash, v.session, v.member, v.merchants, v.env = hash, ws, member, merchants, ws.Environment
	if ws.Merchant != nil {
		for i := range merchants {
			if merchants[i].ID == *ws.Merchant {
				v.merchant = &merchants[i]
			}
		}
	}
	// A member of one merchant has nothing to pick.
	if v.merchant == nil && len(merchants) == 1 {
		if err := a.actFor(r, v, &merchants[0], defaultEnvironment(merchants[0].Merchant)); err != nil {
			return false, true, err
		}
	}
	return true, true, nil
}

// actFor records the merchant and environment the session acts in.
func (a *App) actFor(r *http.Request, v *visit, m *sika.MerchantMembership, env sika.Environment) error {
	id := m.ID
	if err := a.cfg.Store.SetWebSessionTenancy(r.Context(), app, v.tokenHash, &id, env); err != nil {
		return err
	}
	v.merchant, v.env = m, env
	v.session.Merchant, v.session.Environment = &id, env
	return nil
}

// defaultEnvironment is where a merchant lands: LIVE once it may take real money, TEST before.
func defaultEnvironment(m sika.Merchant) sika.Environment {
	if m.IsActive && !m.IsSuspended {
		return sika.EnvironmentLive
	}
	return sika.EnvironmentTest
}

// startSession creates a session for member and sets its cookie (webapp.Kit.StartSession); a
// member of one merchant acts for it at once.
func (a *App) startSession(w http.ResponseWriter, r *http.Request, member sika.Member, merchants []sika.MerchantMembership) error {
	ws := store.WebSession{Member: member.ID, Environment: sika.EnvironmentTest}
	if len(merchants) == 1 {
		id := merchants[0].ID
		ws.Merchant, ws.Environment = &id, defaultEnvironment(merchants[0].Merchant)
	}
	_, err := a.kit.StartSession(w, r, a.cfg.Store, ws, a.cfg.ClientIP(r).String())
	return err
}

// safeNext is a dashboard path to go to after a form (webapp.Kit.SafeNext).
func safeNext(next string) string {
	return (&webapp.Kit{Prefix: Prefix}).SafeNext(next)
}

// parseID is a path's uuid; anything else is not found, as an unknown id is.
func parseID(raw, kind string) (uuid.UUID, error) { return webapp.ParseID(raw, kind) }
