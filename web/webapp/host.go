package webapp

import (
	"context"
	"embed"
	"errors"
	"html/template"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// Policy is what an app gives the kit: who may sign in, what its session adds to a visit, where
// a login lands and how a page is viewed. The kit does the rest (Host).
type Policy[V Visitor] interface {
	// NewVisit is an empty visit of the app.
	NewVisit() V
	// Refusal is "" for a member who may use the app, else the key of the login form's message
	// (403). A session of a member refused since it began is dropped.
	Refusal(m sika.Member) string
	// Resume completes the visit of a session found (its member loaded): the dashboard's
	// merchants and the one it acts for.
	Resume(r *http.Request, v V) error
	// Landing is the session a login starts for m and the path it then goes to (next is the
	// form's, already made safe).
	Landing(r *http.Request, m sika.Member, next string) (store.WebSession, string, error)
	// View is the app's view of a page the kit renders (the login form, the error page).
	View(v V, title string, data any) any
}

// MemberStore is the part of the store the kit reads: sessions and their members.
type MemberStore interface {
	SessionStore
	MemberByID(ctx context.Context, id uuid.UUID) (sika.Member, error)
}

// Host is one app built on the kit: its Kit (paths, cookies, CSRF), its Policy, its pages and
// strings, and what the process that serves it hands it (the API's login rule and budget).
type Host[V Visitor] struct {
	Kit    *Kit
	Policy Policy[V]
	Store  MemberStore
	Pages  map[string]*template.Template
	Text   Catalogue
	// Name names the app in logs ("dashboard", "console").
	Name   string
	Logger *slog.Logger
	// CheckPassword is the API's login rule (POST /auth/login/): the member whose email and
	// password these are, or an error with code invalid_credentials (rate_limited when the
	// account waits after failed logins).
	CheckPassword func(ctx context.Context, email, password string) (sika.Member, error)
	// ThrottleLogin counts a login attempt against the API's login budget of the caller's
	// address; an error with code rate_limited refuses it.
	ThrottleLogin func(w http.ResponseWriter, r *http.Request) error
	ClientIP      func(r *http.Request) netip.Addr
	RouteMatched  func(r *http.Request)
	// Foreign is another app's kit: a live session of it is answered 403 here instead of the
	// login form (the console refuses a merchant's dashboard session).
	Foreign *Kit
	// Refusals shows the service's refusal of an action (its message, 409 or 400) and the staff
	// role's limits (403) on the error page, instead of a 500.
	Refusals bool
}

// NewHost builds an app on the kit, with the kit's defaults for what h and k leave zero (the
// process's logger and clock, the session lifetimes, the client address of the connection).
func NewHost[V Visitor](h Host[V], k Kit) *Host[V] {
	if h.Logger == nil {
		h.Logger = slog.Default()
	}
	if k.Now == nil {
		k.Now = time.Now
	}
	if k.IdleTimeout == 0 {
		k.IdleTimeout = DefaultIdleTimeout
	}
	if k.SessionLifetime == 0 {
		k.SessionLifetime = DefaultSessionLifetime
	}
	if h.ClientIP == nil {
		h.ClientIP = func(r *http.Request) netip.Addr {
			ap, _ := netip.ParseAddrPort(r.RemoteAddr)
			return ap.Addr()
		}
	}
	if h.RouteMatched == nil {
		h.RouteMatched = func(*http.Request) {}
	}
	k.PublicURL = strings.TrimRight(k.PublicURL, "/")
	h.Kit = &k
	return &h
}

// Router is the app's router with what the kit serves: the static files (the app's own,
// appStatic, beside the shared ones), the login form, logout, and the kit's pages for a path or
// a method the app does not have. The app adds its pages.
func (h *Host[V]) Router(appStatic fs.FS) *mux.Router {
	r := mux.NewRouter()
	r.NotFoundHandler = http.HandlerFunc(h.NotFound)
	r.MethodNotAllowedHandler = http.HandlerFunc(h.MethodNotAllowed)
	p := h.Kit.Prefix
	r.Handle(p+"static/{file:.+}", Static(p, appStatic, h.NotFound, h.RouteMatched)).Methods(http.MethodGet, http.MethodHead)
	r.Handle(p+"login/", h.Public(h.LoginPage)).Methods(http.MethodGet)
	r.Handle(p+"login/", h.Public(h.Login)).Methods(http.MethodPost)
	r.Handle(p+"logout/", h.Session(h.Logout)).Methods(http.MethodPost)
	return r
}

// Handler serves a request of a visit; an error is rendered by Host.Fail.
type Handler[V Visitor] func(w http.ResponseWriter, r *http.Request, v V) error

// PathID is the uuid of the request's {id} path variable; anything else is not found, as an
// unknown id is (kind names what was looked for).
func PathID(r *http.Request, kind string) (uuid.UUID, error) {
	id, err := uuid.Parse(mux.Vars(r)["id"])
	if err != nil {
		return uuid.Nil, sika.NotFound(kind)
	}
	return id, nil
}

// Visit is a new visit of the request: its language, no session yet.
func (h *Host[V]) Visit(r *http.Request) V {
	v := h.Policy.NewVisit()
	b := v.base()
	b.Lang, b.r, b.cat, b.prefix = Lang(r), r, h.Text, h.Kit.Prefix
	return v
}

// Public serves a page that needs no session (the login form).
func (h *Host[V]) Public(fn Handler[V]) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.RouteMatched(r)
		v := h.Visit(r)
		if err := fn(w, r, v); err != nil {
			h.Fail(w, r, v, err)
		}
	})
}

// Session serves a page of a signed-in member: without a session, to the login form (a
// Foreign session: 403). Anything but a GET must carry the session's CSRF token, its body
// bounded by MaxFormBytes.
func (h *Host[V]) Session(fn Handler[V]) http.Handler { return h.session(fn, false) }

// Upload serves a multipart POST that carries a file (a KYC document): its body may be as large
// as the API's upload takes (MaxUploadBytes), and it is streamed to fn as Visit.Parts, never
// read whole. Its CSRF token is checked as any form's: in the X-CSRF-Token header, or in the
// csrf_token field, which must then be the body's first part (the form puts it first), so the
// token is known before any of the file is read.
func (h *Host[V]) Upload(fn Handler[V]) http.Handler { return h.session(fn, true) }

func (h *Host[V]) session(fn Handler[V], upload bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.RouteMatched(r)
		v := h.Visit(r)
		found, hadCookie, err := h.Load(w, r, v)
		if err != nil {
			h.Fail(w, r, v, err)
			return
		}
		if !found {
			if h.ForeignSession(r) {
				h.Fail(w, r, v, ErrForbidden)
				return
			}
			h.Kit.ToLogin(w, r, hadCookie)
			return
		}
		b := v.base()
		switch {
		case upload:
			r.Body = http.MaxBytesReader(w, r.Body, MaxUploadBytes)
			if b.Parts, err = h.Kit.CheckUploadCSRF(r, b.Session.CSRFToken); err != nil {
				h.Fail(w, r, v, err)
				return
			}
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
			if err := h.Kit.CheckCSRF(r, b.Session.CSRFToken); err != nil {
				h.Fail(w, r, v, err)
				return
			}
		}
		if err := fn(w, r, v); err != nil {
			h.Fail(w, r, v, err)
		}
	})
}

// ForeignSession reports whether the request carries a live session of the Foreign app. Its
// cookie's path is the other app's, so a browser does not send it here; a client that does is
// refused all the same.
func (h *Host[V]) ForeignSession(r *http.Request) bool {
	if h.Foreign == nil {
		return false
	}
	k := *h.Foreign
	k.PublicURL = h.Kit.PublicURL
	hash, ok := k.SessionToken(r)
	if !ok {
		return false
	}
	_, err := h.Store.WebSessionByToken(r.Context(), k.App, hash, h.Kit.Now())
	return err == nil
}

// Load reads the session of the request's cookie and its member into v, and lets the policy
// complete it. found is false without a live session of a member the app admits (one refused
// since loses it); hadCookie tells an ended session from none.
func (h *Host[V]) Load(w http.ResponseWriter, r *http.Request, v V) (found, hadCookie bool, err error) {
	ws, hash, found, hadCookie, err := h.Kit.LoadSession(w, r, h.Store)
	if !found || err != nil {
		return false, hadCookie, err
	}
	member, err := h.Store.MemberByID(r.Context(), ws.Member)
	if err == nil && h.Policy.Refusal(member) != "" {
		err = sika.NotFound("Member")
	}
	if sika.ErrorCode(err) == sika.CodeNotFound {
		return false, true, h.Kit.DropSession(w, r, h.Store, hash)
	}
	if err != nil {
		return false, true, err
	}
	b := v.base()
	b.TokenHash, b.Session, b.Member = hash, ws, member
	if err := h.Policy.Resume(r, v); err != nil {
		return false, true, err
	}
	return true, true, nil
}

// LoginData is what the login form shows.
type LoginData struct {
	Email, Next string
	// Error is the key of the message above the form; Notice of a neutral one (signed out,
	// session ended).
	Error, Notice string
	// Wait is, with too_many_attempts, the seconds to wait before the next try (also the
	// answer's Retry-After); 0 when unknown.
	Wait int
	// LoginCSRF is the form's token, the double of the login cookie: there is no session to
	// keep a token in yet, and a forged login (into the attacker's account) is refused too.
	LoginCSRF string
}

// LoginPage shows the login form, or sends a member who is signed in on.
func (h *Host[V]) LoginPage(w http.ResponseWriter, r *http.Request, v V) error {
	q := r.URL.Query()
	next := h.Kit.SafeNext(q.Get("next"))
	found, _, err := h.Load(w, r, h.Visit(r))
	if err != nil {
		return err
	}
	if found {
		Redirect(w, r, next)
		return nil
	}
	d := LoginData{Next: next}
	switch {
	case q.Get("expired") != "":
		d.Notice = "session_expired"
	case q.Get("signed_out") != "":
		d.Notice = "signed_out"
	}
	return h.renderLogin(w, r, v, http.StatusOK, d)
}

// renderLogin writes the login form with a fresh login token.
func (h *Host[V]) renderLogin(w http.ResponseWriter, r *http.Request, v V, status int, d LoginData) error {
	d.LoginCSRF = h.Kit.NewLoginToken(w, r)
	return h.Render(w, r, status, "login", "layout", h.Policy.View(v, "login_title", d))
}

// Login checks the form with the API's login rule and budget, admits whom the policy admits,
// and starts a session where the policy lands it.
func (h *Host[V]) Login(w http.ResponseWriter, r *http.Request, v V) error {
	r.Body = http.MaxBytesReader(w, r.Body, MaxFormBytes)
	if err := r.ParseForm(); err != nil {
		return ErrForbidden
	}
	if err := h.Kit.CheckLoginCSRF(r); err != nil {
		return err
	}
	d := LoginData{Email: strings.TrimSpace(r.PostForm.Get("email")), Next: h.Kit.SafeNext(r.PostForm.Get("next"))}
	refuse := func(status int, key string) error {
		d.Error = key
		return h.renderLogin(w, r, v, status, d)
	}
	if err := h.ThrottleLogin(w, r); err != nil {
		if sika.ErrorCode(err) != sika.CodeRateLimited {
			return err
		}
		d.Wait, _ = strconv.Atoi(w.Header().Get("Retry-After")) // set by the budget
		return refuse(http.StatusTooManyRequests, "too_many_attempts")
	}
	password := r.PostForm.Get("password")
	if d.Email == "" || password == "" {
		return refuse(http.StatusBadRequest, "login_required")
	}
	member, err := h.CheckPassword(r.Context(), d.Email, password)
	switch sika.ErrorCode(err) {
	case sika.CodeInvalidCredentials:
		return refuse(http.StatusUnauthorized, "wrong_credentials")
	case sika.CodeRateLimited: // the account waits after failed logins, longer at each
		var locked interface{ RetryAfter() time.Duration }
		if errors.As(err, &locked) {
			d.Wait = int(math.Ceil(locked.RetryAfter().Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(d.Wait))
		}
		return refuse(http.StatusTooManyRequests, "too_many_attempts")
	}
	if err != nil {
		return err
	}
	if key := h.Policy.Refusal(member); key != "" {
		return refuse(http.StatusForbidden, key)
	}
	ws, next, err := h.Policy.Landing(r, member, d.Next)
	if err != nil {
		return err
	}
	// The browser's previous session, if any, ends: one login, one new session.
	if err := h.Kit.EndSession(w, r, h.Store); err != nil {
		return err
	}
	if _, err := h.Kit.StartSession(w, r, h.Store, ws, h.ClientIP(r).String()); err != nil {
		return err
	}
	h.Kit.ClearCookie(w, r, h.Kit.LoginCookie)
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// Logout ends the session.
func (h *Host[V]) Logout(w http.ResponseWriter, r *http.Request, _ V) error {
	if err := h.Kit.EndSession(w, r, h.Store); err != nil {
		return err
	}
	Redirect(w, r, h.Kit.Prefix+"login/?signed_out=1")
	return nil
}

// Render writes block of a page ("layout": the whole page; another block: the part an htmx swap
// replaces) with the app's view.
func (h *Host[V]) Render(w http.ResponseWriter, _ *http.Request, status int, page, block string, view any) error {
	return Render(w, status, h.Pages[page], block, view)
}

// ErrorData is what the error page says.
type ErrorData struct {
	Status  int
	Message string // translation key
	// Detail is the service's own message of a refused action (a conflict, a bad reason).
	Detail string
}

// Fail answers a handler's error with the error page (ErrorPage); with Refusals, an action the
// service refused shows its message (409, 400) and a staff role's limit its own (403).
// Anything else is a 500, logged.
func (h *Host[V]) Fail(w http.ResponseWriter, r *http.Request, v V, err error) {
	status, key, internal := ErrorPage(err)
	d := ErrorData{Status: status, Message: key}
	var se *sika.Error
	if h.Refusals && errors.As(err, &se) {
		switch {
		case status == http.StatusBadRequest:
			d.Detail = se.Error()
			if se.Code == sika.CodeValidation {
				d.Detail = fieldMessages(se.Fields)
			}
		case se.Code == sika.CodeRoleForbidden || se.Code == sika.CodeSelfApprovalForbidden:
			// The staff role's limits and the two-person rule, in the page's language.
			d, internal = ErrorData{Status: http.StatusForbidden, Message: "error_" + string(se.Code)}, false
		case internal && se.Code != "" && se.Code != sika.CodeInternal:
			// A refusal of the service's rules (not_pending, admin_only, service_unavailable).
			d, internal = ErrorData{Status: http.StatusConflict, Message: "error_refused", Detail: se.Message}, false
			if se.Code == sika.CodeServiceUnavailable {
				d.Status = http.StatusServiceUnavailable
			}
		}
	}
	if internal {
		h.Logger.ErrorContext(r.Context(), h.Name, "path", r.URL.Path, "err", err)
	}
	h.errorPage(w, r, v, d)
}

// fieldMessages is a validation error's messages, field by field: what the staff member fixes.
func fieldMessages(fields map[string][]string) string {
	parts := make([]string, 0, len(fields))
	for _, f := range slices.Sorted(maps.Keys(fields)) {
		parts = append(parts, f+": "+strings.Join(fields[f], " "))
	}
	return strings.Join(parts, " · ")
}

func (h *Host[V]) errorPage(w http.ResponseWriter, r *http.Request, v V, d ErrorData) {
	if err := h.Render(w, r, d.Status, "error", "layout", h.Policy.View(v, d.Message, d)); err != nil {
		h.Logger.ErrorContext(r.Context(), h.Name+" error page", "err", err)
		http.Error(w, http.StatusText(d.Status), d.Status)
	}
}

// NotFound answers a path the app does not have.
func (h *Host[V]) NotFound(w http.ResponseWriter, r *http.Request) {
	h.Fail(w, r, h.Visit(r), sika.NotFound("Page"))
}

// MethodNotAllowed answers a method a path does not take.
func (h *Host[V]) MethodNotAllowed(w http.ResponseWriter, r *http.Request) {
	h.errorPage(w, r, h.Visit(r), ErrorData{Status: http.StatusMethodNotAllowed, Message: "error_method"})
}

//go:embed templates
var sharedTemplates embed.FS

// SharedTemplates are the kit's templates: the layout with its slots, the partials, the login
// form and the error page.
func SharedTemplates() fs.FS { return sharedTemplates }

// ParsePages parses each page of an app with the kit's layout and partials (templates/layout.html,
// templates/partials.html) and the app's frame (its templates/frame.html: what it puts in the
// layout's slots, and its own partials). A page is the app's templates/<name>.html, or the
// kit's of that name (login, error).
func ParsePages(appFS fs.FS, names []string) map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, name := range names {
		t := template.Must(template.New("layout.html").ParseFS(sharedTemplates, "templates/layout.html", "templates/partials.html"))
		t = template.Must(t.ParseFS(appFS, "templates/frame.html"))
		page, pageFS := "templates/"+name+".html", appFS
		if _, err := fs.Stat(appFS, page); err != nil {
			pageFS = sharedTemplates
		}
		out[name] = template.Must(t.ParseFS(pageFS, page))
	}
	return out
}
