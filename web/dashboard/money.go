package dashboard

import "github.com/gorilla/mux"

// moneyPages are the page templates of payment links, checkout sessions, payouts, settlements,
// wallet transfers, payout methods and wallet ledgers.
var moneyPages = []string{}

// moneyTranslations are their strings.
var moneyTranslations = map[string]map[string]string{"fr": {}, "en": {}}

// moneyRoutes mounts payment links, checkout sessions, payouts, settlements, wallet transfers,
// payout methods and wallet ledgers.
func (a *App) moneyRoutes(r *mux.Router) {}
