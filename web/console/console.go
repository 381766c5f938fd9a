// Package console is the support console, the web app Sika's staff sign in to (issue 14),
// served by the API process under /console/: the stuck payments with their Temporal UI links
// and a re-verify button, the payouts the operator leaves unclear with a resolve form, the money
// flags, a search by reference across merchants, a transaction's attempts, status log and staff
// actions, the KYC review queue with its documents viewable inline, the suspension of a
// merchant and the verification of payout methods.
//
// It is built on the dashboard's infrastructure (package web/webapp: session cookie, CSRF,
// security headers and CSP, static files and htmx, rendering, language), with sessions of
// their own kind (store.WebAppConsole): a dashboard session is never accepted here, nor a
// console session there, and only a staff member may sign in. It holds no rule of its own:
// every action goes through the code of the admin JSON routes (the store functions, and the
// re-verify and resolve the API hands it in Config), which records it in staff_actions.
package console

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

// Prefix is the path the console is served under.
const Prefix = "/console/"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Reverification is the outcome of a re-verify at the gateway.
type Reverification struct {
	// GatewayStatus is what the operator answered; SentToGateway is false when the transaction
	// was never sent to one (nothing to ask).
	GatewayStatus string
	SentToGateway bool
	Disagreement  bool
	Message       string
	// Status is the transaction's status after the re-verify.
	Status sika.TransactionStatus
}

// Resolution is the outcome of an approved money decision: for an unclear payout, its status and
// who decided it; for a flag's refund, the refund issued.
type Resolution struct {
	Status         sika.TransactionStatus
	DecidedBy      string // "operator" or "support"
	OperatorAnswer string
	Refund         uuid.UUID
}

// Config is what the console is given by the process that serves it (api.NewServer).
type Config struct {
	Store     *store.Store
	PublicURL string
	// CheckPassword is the API's login rule (POST /auth/login/).
	CheckPassword func(ctx context.Context, email, password string) (sika.Member, error)
	// ThrottleLogin counts a login attempt against the API's login budget of the caller's
	// address; an error with code rate_limited refuses it.
	ThrottleLogin func(w http.ResponseWriter, r *http.Request) error
	// Reverify is POST /admin/transactions/{id}/reverify/'s code, for the staff member.
	Reverify func(ctx context.Context, staff sika.Member, id uuid.UUID) (Reverification, error)
	// Propose is POST /admin/transactions/{id}/resolve/'s code (api.ProposeResolution): the
	// first person of a money decision.
	Propose func(ctx context.Context, staff sika.Member, id uuid.UUID, status sika.TransactionStatus, reason string) (store.MoneyDecision, error)
	// QuoteFlagRefund prices the refund of amount for a REFUND_DUE flag (api.Server.QuoteRefund);
	// ProposeFlagRefund is POST /admin/money-flags/{id}/refund/'s code and ProposeReheld
	// POST /admin/money-flags/{id}/settle/'s: first persons of money decisions on flags.
	QuoteFlagRefund   func(ctx context.Context, f store.MoneyFlag, amount string) (RefundQuote, error)
	ProposeFlagRefund func(ctx context.Context, staff sika.Member, flag uuid.UUID, amount, reason string) (store.MoneyDecision, error)
	ProposeReheld     func(ctx context.Context, staff sika.Member, flag uuid.UUID, status sika.TransactionStatus, reason string) (store.MoneyDecision, error)
	// Approve and Reject are POST /admin/money-decisions/{id}/approve/ and reject/'s code
	// (api.Server.ApproveMoneyDecision, api.RejectMoneyDecision): the second person.
	Approve func(ctx context.Context, staff sika.Member, id uuid.UUID) (Resolution, error)
	Reject  func(ctx context.Context, staff sika.Member, id uuid.UUID, note string) error
	// WorkflowURL links a transaction's workflow in the Temporal UI ("" without a UI).
	WorkflowURL func(t sika.Transaction) string
	// ServeKYCFile writes a stored KYC file, inline, by its name's parts (any merchant's: staff),
	// as the API serves files (GET /merchant-kyc/files/…); not_found otherwise.
	ServeKYCFile func(w http.ResponseWriter, r *http.Request, sha256, ext string) error
	ClientIP     func(r *http.Request) netip.Addr
	RouteMatched func(r *http.Request)
	// Codec is the Temporal payload codec server (payloadcodec.Ring.DecodeHandler), served to
	// staff sessions at CodecPath; nil serves none. CodecOrigins are the browser origins allowed
	// to call it (the Temporal UI's: see OriginOf).
	Codec        http.Handler
	CodecOrigins []string
	// IdleTimeout and SessionLifetime: zero means webapp's defaults.
	IdleTimeout     time.Duration
	SessionLifetime time.Duration
	Logger          *slog.Logger
	Now             func() time.Time
}

// App serves the console.
type App struct {
	cfg    Config
	host   *webapp.Host[*visit]
	router *mux.Router
}

// pageNames are the page templates; each is parsed with the kit's layout and frame.html (the
// login form and the error page are the kit's).
var pageNames = []string{"login", "stuck", "unclear", "flags", "flag", "search", "transaction", "kyc", "dossier",
	"merchants", "merchant", "payout_methods", "actions", "decisions", "staff", "error"}

// New builds the console on the web kit (webapp.NewHost) with the console's policy.
func New(cfg Config) *App {
	if cfg.WorkflowURL == nil {
		cfg.WorkflowURL = func(sika.Transaction) string { return "" }
	}
	a := &App{}
	a.host = webapp.NewHost(webapp.Host[*visit]{Policy: policy{}, Store: cfg.Store, Pages: webapp.ParsePages(templateFS, pageNames),
		Text: translations, Name: "console", Logger: cfg.Logger, CheckPassword: cfg.CheckPassword, ThrottleLogin: cfg.ThrottleLogin,
		ClientIP: cfg.ClientIP, RouteMatched: cfg.RouteMatched, Foreign: &dashboardKit, Refusals: true},
		webapp.Kit{Prefix: Prefix, App: store.WebAppConsole, SessionCookie: "sika_console", LoginCookie: "sika_console_login",
			PublicURL: cfg.PublicURL, IdleTimeout: cfg.IdleTimeout, SessionLifetime: cfg.SessionLifetime, Now: cfg.Now})
	cfg.Logger, cfg.RouteMatched = a.host.Logger, a.host.RouteMatched
	a.cfg = cfg
	a.router = a.routes()
	return a
}

// routes lists every page and action of the console; all but the login form and the static
// files need a staff session, and every POST checks its CSRF token.
func (a *App) routes() *mux.Router {
	r := a.host.Router(staticFS)
	get, post := http.MethodGet, http.MethodPost
	r.HandleFunc(CodecPath, a.codec).Methods(post, http.MethodOptions)

	r.Handle(Prefix, a.staff(a.stuck)).Methods(get)
	r.Handle(Prefix+"unclear/", a.staff(a.unclear)).Methods(get)
	r.Handle(Prefix+"flags/", a.staff(a.flags)).Methods(get)
	r.Handle(Prefix+"flags/{id}/", a.staff(a.flag)).Methods(get)
	r.Handle(Prefix+"search/", a.staff(a.search)).Methods(get)
	r.Handle(Prefix+"actions/", a.staff(a.actions)).Methods(get)
	r.Handle(Prefix+"transactions/{id}/", a.staff(a.transaction)).Methods(get)
	// Every action needs the role that allows it (sika.StaffRole.Can); the pages show only the
	// actions the member's role allows.
	r.Handle(Prefix+"transactions/{id}/reverify/", a.staffCan(sika.PermReverify, a.reverify)).Methods(post)
	r.Handle(Prefix+"transactions/{id}/resolve/", a.staffCan(sika.PermProposeMoneyDecision, a.resolve)).Methods(post)
	r.Handle(Prefix+"flags/{id}/refund/", a.staffCan(sika.PermProposeMoneyDecision, a.proposeFlagRefund)).Methods(post)
	r.Handle(Prefix+"flags/{id}/settle/", a.staffCan(sika.PermProposeMoneyDecision, a.proposeReheld)).Methods(post)
	r.Handle(Prefix+"decisions/", a.staff(a.decisions)).Methods(get)
	r.Handle(Prefix+"decisions/{id}/approve/", a.staffCan(sika.PermApproveMoneyDecision, a.approveDecision)).Methods(post)
	r.Handle(Prefix+"decisions/{id}/reject/", a.staffCan(sika.PermApproveMoneyDecision, a.rejectDecision)).Methods(post)

	r.Handle(Prefix+"kyc/", a.staff(a.kycQueue)).Methods(get)
	// Before {id}: mux matches in the order routes were added.
	r.Handle(Prefix+"kyc/files/{sha256}.{ext}", a.staff(a.kycFile)).Methods(get)
	r.Handle(Prefix+"kyc/{id}/", a.staff(a.dossier)).Methods(get)
	r.Handle(Prefix+"kyc/{id}/approve/", a.staffCan(sika.PermReviewKYC, a.approveDossier)).Methods(post)
	r.Handle(Prefix+"kyc/{id}/reject/", a.staffCan(sika.PermReviewKYC, a.rejectDossier)).Methods(post)

	r.Handle(Prefix+"merchants/", a.staff(a.merchants)).Methods(get)
	r.Handle(Prefix+"merchants/{id}/", a.staff(a.merchant)).Methods(get)
	r.Handle(Prefix+"merchants/{id}/suspend/", a.staffCan(sika.PermSuspendMerchant, a.suspend)).Methods(post)
	r.Handle(Prefix+"merchants/{id}/unsuspend/", a.staffCan(sika.PermReinstateMerchant, a.unsuspend)).Methods(post)
	r.Handle(Prefix+"payout-methods/", a.staff(a.payoutMethods)).Methods(get)
	r.Handle(Prefix+"payout-methods/{id}/verify/", a.staffCan(sika.PermVerifyPayoutMethod, a.verifyPayoutMethod)).Methods(post)

	r.Handle(Prefix+"staff/", a.staffCan(sika.PermManageStaff, a.staffPage)).Methods(get)
	r.Handle(Prefix+"staff/role/", a.staffCan(sika.PermManageStaff, a.setStaffRole)).Methods(post)
	return r
}

// ServeHTTP serves a console request (webapp.Kit.Serve: security headers, language choice).
func (a *App) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.host.Kit.Serve(w, r, a.router) }

// Route is a method and path template the console serves.
type Route = webapp.Route

// Routes lists every method and path template the console serves, so that a test can check
// it covers them all.
func (a *App) Routes() []Route { return webapp.Routes(a.router) }
