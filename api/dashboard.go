package api

import (
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/dashboard"
)

// dashboardRoutes mounts the merchant dashboard (package web/dashboard) under /dashboard/. It
// is handed the API's own rules where it needs one: the login rule of POST /auth/login/ and its
// budget per client address, the CSV export of GET /transactions/export/, the client address
// behind trusted proxies. The routes have no method of their own here (the dashboard routes
// inside), so the OpenAPI coverage test, which covers the JSON API, does not walk them.
func (s *Server) dashboardRoutes(root *mux.Router) {
	app := dashboard.New(dashboard.Config{
		Store:         s.store,
		PublicURL:     s.cfg.PublicURL,
		CheckPassword: s.checkPassword,
		ThrottleLogin: s.throttleLogin,
		ExportTransactions: func(w http.ResponseWriter, r *http.Request, merchant uuid.UUID, env sika.Environment) error {
			if info, ok := r.Context().Value(ctxRequestInfo).(*requestInfo); ok {
				info.merchant = merchant
			}
			return s.streamTransactionsCSV(w, r, merchant, env)
		},
		API:          s.CallAsMember,
		QuotePayout:  s.quotePayout,
		QuoteRefund:  s.quoteRefundForDashboard,
		ClientIP:     s.clientIP,
		RouteMatched: routeName,
		Logger:       s.cfg.Logger,
		Now:          s.cfg.Now,
	})
	mountWebApp(root, dashboard.Prefix, app)
}

// throttleLogin is the budget per client address of POST /auth/login/, for the login forms of
// the dashboard and the console.
func (s *Server) throttleLogin(w http.ResponseWriter, r *http.Request) error {
	return s.rateLimit(w, r, nil, routeOpts{throttleByIP: true})
}

// mountWebApp serves a web app (the dashboard, the console) under prefix, which ends in "/";
// the prefix without its slash redirects there.
func mountWebApp(root *mux.Router, prefix string, app http.Handler) {
	root.Handle(strings.TrimSuffix(prefix, "/"), http.RedirectHandler(prefix, http.StatusMovedPermanently))
	root.PathPrefix(prefix).Handler(app)
}
