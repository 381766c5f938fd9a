// Package dashboard is the merchant dashboard, the web app a merchant's team signs in to
// (issue 14), served by the API process under /dashboard/. Pages render on the server with
// html/template; htmx, vendored from the npm registry and embedded (web/webapp/static/vendor),
// updates parts of a page; nothing is loaded from another origin.
//
// It holds no rule of its own about money or tenancy: it reads through the store functions the
// JSON API uses, the API's filter parsing (package api/filter), and the login rule and CSV export
// the API hands it in Config. Its own subject is the browser session: a random id in an HttpOnly
// cookie, the session kept in Postgres (store.WebSession) with idle and absolute expiry, a CSRF
// token per session checked on every request that is not a GET, a Content-Security-Policy that
// allows scripts only from this origin, and no staff member (the staff console is another app).
// Pages are French unless English is asked for (Accept-Language or the switch).
package dashboard

import (
	"context"
	"embed"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// Prefix is the path the dashboard is served under.
const Prefix = "/dashboard/"

// ContentSecurityPolicy is the policy of every page (webapp.ContentSecurityPolicy).
const ContentSecurityPolicy = webapp.ContentSecurityPolicy

// Defaults of the session lifetime (webapp's).
const (
	DefaultIdleTimeout     = webapp.DefaultIdleTimeout
	DefaultSessionLifetime = webapp.DefaultSessionLifetime
)

//go:embed templates/*.html
var templateFS embed.FS

// staticFS holds the dashboard's own scripts (static/), served beside the shared ones.
//
//go:embed static
var staticFS embed.FS

// Store is what the dashboard reads and writes; *store.Store is it. Every merchant read takes
// the tenancy (merchant and environment) of the session, as the API's do.
type Store interface {
	MemberByID(ctx context.Context, id uuid.UUID) (sika.Member, error)
	MemberMerchants(ctx context.Context, memberID uuid.UUID) ([]sika.MerchantMembership, error)
	ListWallets(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page store.PageRequest) ([]sika.Wallet, int, error)
	ListTransactions(ctx context.Context, merchantID uuid.UUID, env sika.Environment, f store.TransactionFilter, req store.KeysetRequest) ([]sika.Transaction, bool, error)
	TransactionDetail(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.TransactionDetail, error)
	PayoutApprovalOf(ctx context.Context, transactionID uuid.UUID) (store.PayoutApproval, error)
	CatalogueCodes(ctx context.Context, country, network, currency string) (countryOK, networkOK, currencyOK bool, err error)
	ListCountries(ctx context.Context) ([]sika.Country, error)
	ListNetworks(ctx context.Context, page store.PageRequest) ([]sika.Network, int, error)

	CreateWebSession(ctx context.Context, ws store.WebSession) error
	WebSessionByToken(ctx context.Context, app store.WebApp, tokenHash []byte, now time.Time) (store.WebSession, error)
	TouchWebSession(ctx context.Context, app store.WebApp, tokenHash []byte, now time.Time, idle time.Duration) error
	SetWebSessionTenancy(ctx context.Context, app store.WebApp, tokenHash []byte, merchant *uuid.UUID, env sika.Environment) error
	DeleteWebSession(ctx context.Context, app store.WebApp, tokenHash []byte) error

	developerStore
	moneyStore
}

// Config is what the dashboard is given by the process that serves it (api.NewServer).
type Config struct {
	Store Store
	// PublicURL is the scheme and host the service is reached at; an https URL marks the
	// session cookie Secure (as does a request that came over TLS).
	PublicURL string
	// CheckPassword is the API's login rule (POST /auth/login/): the member whose email and
	// password these are, or an error with code invalid_credentials.
	CheckPassword func(ctx context.Context, email, password string) (sika.Member, error)
	// ThrottleLogin counts a login attempt against the API's login budget of the caller's
	// address; an error with code rate_limited refuses it (the header Retry-After is set).
	ThrottleLogin func(w http.ResponseWriter, r *http.Request) error
	// ExportTransactions streams the API's CSV export of the transactions the request's query
	// filters select (the parameters of GET /transactions/), for a merchant and environment. An
	// error returned before anything was written (a bad filter) leaves the answer to the caller.
	ExportTransactions func(w http.ResponseWriter, r *http.Request, merchant uuid.UUID, env sika.Environment) error
	// API calls a route of the JSON API in process for the session's member, merchant and
	// environment (api.Server.CallAsMember): every form that changes something (a payment link,
	// a payout, an API key, a webhook endpoint, a KYC dossier, the settings) acts through it, so
	// the API's validation, rules, idempotency and audit apply unchanged.
	API webapp.CallAPI
	// QuotePayout prices a payout by the rule POST /payouts/initialize/ applies (the API's
	// pricePayout): the fee the payout form shows before the merchant confirms is the fee the
	// API then charges. An invalid request answers the API's validation or business error.
	QuotePayout func(ctx context.Context, merchant uuid.UUID, env sika.Environment, q PayoutQuoteRequest) (sika.Fees, error)
	// QuoteRefund prices and routes a refund of a collection by the rule POST /refunds/ applies
	// (the API's QuoteRefund): what the refund form shows before the merchant confirms is what
	// the API then does. Nil: the transaction page offers no refund.
	QuoteRefund func(ctx context.Context, merchant uuid.UUID, env sika.Environment, q RefundQuoteRequest) (RefundQuote, error)
	// ClientIP is the caller's address as the API sees it (behind trusted proxies), recorded
	// with a new session.
	ClientIP func(r *http.Request) netip.Addr
	// RouteMatched is told about each request once its route is known (the API's logs and
	// metrics name requests by route template).
	RouteMatched func(r *http.Request)
	// IdleTimeout ends a session unused for that long; SessionLifetime ends any session that
	// long after login. Zero means DefaultIdleTimeout and DefaultSessionLifetime.
	IdleTimeout     time.Duration
	SessionLifetime time.Duration
	Logger          *slog.Logger
	Now             func() time.Time
}

// App serves the dashboard.
type App struct {
	cfg    Config
	host   *webapp.Host[*visit]
	router *mux.Router
}

// New builds the dashboard on the web kit (webapp.NewHost) with the dashboard's policy.
func New(cfg Config) *App {
	a := &App{}
	var st webapp.MemberStore
	if cfg.Store != nil {
		st = cfg.Store
	}
	a.host = webapp.NewHost(webapp.Host[*visit]{Policy: policy{a}, Store: st, Pages: webapp.ParsePages(templateFS, pageNames),
		Text: translations, Name: "dashboard", Logger: cfg.Logger, CheckPassword: cfg.CheckPassword, ThrottleLogin: cfg.ThrottleLogin,
		ClientIP: cfg.ClientIP, RouteMatched: cfg.RouteMatched},
		webapp.Kit{Prefix: Prefix, App: app, SessionCookie: "sika_dashboard", LoginCookie: "sika_dashboard_login",
			PublicURL: cfg.PublicURL, IdleTimeout: cfg.IdleTimeout, SessionLifetime: cfg.SessionLifetime, Now: cfg.Now})
	cfg.Logger, cfg.RouteMatched, cfg.Now = a.host.Logger, a.host.RouteMatched, a.host.Kit.Now
	a.cfg = cfg
	a.router = a.routes()
	return a
}

// routes lists every page and action of the dashboard. Pages that show a merchant's data need a
// session with a merchant picked; every POST checks the session's CSRF token.
func (a *App) routes() *mux.Router {
	r := a.host.Router(staticFS)
	get, post := http.MethodGet, http.MethodPost

	r.Handle(Prefix+"merchants/", a.signedIn(a.merchantPicker)).Methods(get)
	r.Handle(Prefix+"merchants/", a.signedIn(a.pickMerchant)).Methods(post)
	r.Handle(Prefix+"environment/", a.forMerchant(a.switchEnvironment)).Methods(post)

	r.Handle(Prefix, a.forMerchant(a.home)).Methods(get)
	// Before {id}: mux matches in the order routes were added.
	r.Handle(Prefix+"transactions/export/", a.forMerchant(a.exportTransactions)).Methods(get)
	r.Handle(Prefix+"transactions/", a.forMerchant(a.transactions)).Methods(get)
	r.Handle(Prefix+"transactions/{id}/", a.forMerchant(a.transaction)).Methods(get)
	r.Handle(Prefix+"networks/", a.forMerchant(a.networks)).Methods(get)
	a.moneyRoutes(r)
	a.batchRoutes(r)
	a.developerRoutes(r)
	return r
}

// ServeHTTP serves a dashboard request (webapp.Kit.Serve: security headers, language choice).
func (a *App) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.host.Kit.Serve(w, r, a.router) }

// Route is a method and path template the dashboard serves.
type Route = webapp.Route

// Routes lists every method and path template the dashboard serves, so that a test can check
// it covers them all.
func (a *App) Routes() []Route { return webapp.Routes(a.router) }
