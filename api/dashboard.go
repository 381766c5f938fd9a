package api

import (
	"net/http"

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
		ThrottleLogin: func(w http.ResponseWriter, r *http.Request) error {
			return s.rateLimit(w, r, nil, routeOpts{throttleByIP: true})
		},
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
	root.Handle(dashboard.Prefix[:len(dashboard.Prefix)-1], http.RedirectHandler(dashboard.Prefix, http.StatusMovedPermanently))
	root.PathPrefix(dashboard.Prefix).Handler(app)
}
