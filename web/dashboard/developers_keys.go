package dashboard

import (
	"net/http"
	"strings"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// developersData is the developers page: the environment's API keys, IP whitelist and webhook
// endpoints, each with its form. NewKey and NewEndpoint hold a secret the API has just
// answered: it is shown in that one answer and never again (the API keeps only its hash).
type developersData struct {
	Keys      []sika.APIKey
	Addresses []sika.IPWhitelistEntry
	Endpoints []sika.WebhookEndpoint

	KeyForm, IPForm, EndpointForm *formState
	NewKey                        *sika.APIKey
	NewEndpoint                   *sika.WebhookEndpoint
	Notice, Refused               string
	Scopes, Environments          []string
}

// developers shows the API keys, the IP whitelist and the webhook endpoints of the
// environment, read as GET /api-keys/, /ip-whitelist/ and /merchant-webhooks/ read them.
func (a *App) developers(w http.ResponseWriter, r *http.Request, v *visit) error {
	d := &developersData{Notice: notice(r), Refused: refusal(r, v)}
	return a.renderDevelopers(w, r, v, http.StatusOK, d)
}

// renderDevelopers fills the lists and the forms not given, and writes the page.
func (a *App) renderDevelopers(w http.ResponseWriter, r *http.Request, v *visit, status int, d *developersData) error {
	ctx := r.Context()
	page := store.PageRequest{Page: 1, PageSize: managedListSize}
	var err error
	if d.Keys, _, err = a.cfg.Store.ListAPIKeys(ctx, v.merchant.ID, v.env, page); err != nil {
		return err
	}
	if d.Addresses, _, err = a.cfg.Store.ListIPWhitelist(ctx, v.merchant.ID, v.env, page); err != nil {
		return err
	}
	if d.Endpoints, _, err = a.cfg.Store.ListWebhookEndpoints(ctx, v.merchant.ID, v.env, page); err != nil {
		return err
	}
	if d.KeyForm == nil {
		d.KeyForm = newForm(map[string]string{"name": "", "scope": string(sika.ScopeBoth), "environment": string(v.env)})
	}
	if d.IPForm == nil {
		d.IPForm = newForm(map[string]string{"ip_address": "", "description": ""})
	}
	if d.EndpointForm == nil {
		d.EndpointForm = newForm(map[string]string{"url": "", "description": ""})
	}
	d.Scopes = []string{string(sika.ScopeBoth), string(sika.ScopePayin), string(sika.ScopePayout)}
	d.Environments = []string{string(sika.EnvironmentTest), string(sika.EnvironmentLive)}
	return a.render(w, r, status, "developers", &view{visit: v, Title: "developers_title", Nav: "developers", Data: d})
}

// createAPIKey creates a key by POST /api-keys/ in the environment the form chose (the
// session's by default) and shows its secret in this answer only.
func (a *App) createAPIKey(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(formValues(r, "name", "scope", "environment"))
	env := sika.Environment(strings.ToUpper(f.Val("environment")))
	body := map[string]any{"name": f.Val("name"), "scope": f.Val("scope"), "environment": f.Val("environment")}
	var key sika.APIKey
	// The call is made in the environment asked for, so that X-Environment and the body agree
	// (the API refuses a body environment that contradicts the header); an unknown one is the
	// API's to refuse, in the session's environment.
	call := apiCall(http.MethodPost, "/api-keys/", body)
	if env.Valid() {
		call.Environment = env
	}
	if err := a.send(r, v, call, &key); err != nil {
		return f.again(v.Lang, err, func() error { return a.renderDevelopers(w, r, v, f.Status, &developersData{KeyForm: f}) })
	}
	a.cfg.Logger.InfoContext(r.Context(), "api key created from the dashboard", "key", key.ID,
		"environment", key.Environment, "scope", key.Scope, "member", v.Member.ID)
	return a.renderDevelopers(w, r, v, http.StatusCreated, &developersData{NewKey: &key})
}

// revokeAPIKey revokes a key of the environment by POST /api-keys/{id}/revoke/.
func (a *App) revokeAPIKey(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "API key")
	if err != nil {
		return err
	}
	return a.press(w, r, v, http.MethodPost, "/api-keys/"+id.String()+"/revoke/", nil, Prefix+"developers/", Prefix+"developers/", "done_key_revoked")
}

// addIPAddress adds an address or range to the environment's whitelist by POST /ip-whitelist/.
func (a *App) addIPAddress(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(formValues(r, "ip_address", "description"))
	return a.submit(w, r, v, f, http.MethodPost, "/ip-whitelist/", f.Values, Prefix+"developers/", "done_ip_added", func() error {
		return a.renderDevelopers(w, r, v, f.Status, &developersData{IPForm: f})
	})
}

// deleteIPAddress removes a whitelist entry by DELETE /ip-whitelist/{id}/.
func (a *App) deleteIPAddress(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "IP whitelist entry")
	if err != nil {
		return err
	}
	return a.press(w, r, v, http.MethodDelete, "/ip-whitelist/"+id.String()+"/", nil, Prefix+"developers/", Prefix+"developers/", "done_ip_removed")
}

// developersTranslations are the strings of the developers page, its API keys and IP whitelist,
// and of the notices shown after a form.
var developersTranslations = webapp.Catalogue{
	"fr": {
		"developers_title":     "Développeurs",
		"developers_help":      "Clés d'API, adresses autorisées et webhooks de l'environnement",
		"events_link":          "Journal des événements →",
		"api_keys":             "Clés d'API",
		"key_created":          "Clé créée.",
		"secret_once":          "Copiez-la maintenant : elle ne sera plus jamais affichée.",
		"secret_key":           "Clé secrète",
		"col_key":              "Clé",
		"col_scope":            "Portée",
		"col_last_used":        "Dernière utilisation",
		"unnamed":              "sans nom",
		"active":               "Active",
		"revoked":              "Révoquée",
		"revoke":               "Révoquer",
		"no_key":               "Aucune clé dans cet environnement.",
		"new_key":              "Nouvelle clé",
		"environment":          "Environnement",
		"key_environment_help": "Une clé TEST n'atteint que le bac à sable ; une clé LIVE déplace de l'argent réel.",
		"create_key":           "Créer la clé",
		"scope_BOTH":           "Encaissements et décaissements",
		"scope_PAYIN":          "Encaissements seulement",
		"scope_PAYOUT":         "Décaissements seulement",
		"ip_whitelist":         "Adresses IP autorisées",
		"ip_whitelist_help":    "Les décaissements, reversements et transferts demandés par clé d'API ne sont acceptés que depuis ces adresses.",
		"no_ip":                "Aucune adresse : les décaissements par clé d'API sont refusés.",
		"add_ip":               "Ajouter l'adresse",
		"ip_address":           "Adresse IP ou plage CIDR",
		"ip_address_help":      "Par exemple 203.0.113.9 ou 203.0.113.0/24 (IPv4 ou IPv6).",
		"remove":               "Retirer",

		"done_key_revoked":       "Clé révoquée : elle ne permet plus aucun appel.",
		"done_ip_added":          "Adresse ajoutée.",
		"done_ip_removed":        "Adresse retirée.",
		"done_endpoint_enabled":  "Point de terminaison réactivé.",
		"done_endpoint_disabled": "Point de terminaison désactivé : il ne reçoit plus rien.",
		"done_endpoint_deleted":  "Point de terminaison supprimé.",
		"done_redelivered":       "Nouvel envoi programmé : il apparaîtra dans le journal dans quelques secondes.",
		"done_dossier_submitted": "Dossier envoyé. Ajoutez maintenant vos pièces justificatives.",
		"done_document_added":    "Document ajouté au dossier.",
		"done_settings_saved":    "Paramètres enregistrés.",
	},
	"en": {
		"developers_title":     "Developers",
		"developers_help":      "API keys, allowed addresses and webhooks of the environment",
		"events_link":          "Event log →",
		"api_keys":             "API keys",
		"key_created":          "Key created.",
		"secret_once":          "Copy it now: it will never be shown again.",
		"secret_key":           "Secret key",
		"col_key":              "Key",
		"col_scope":            "Scope",
		"col_last_used":        "Last used",
		"unnamed":              "unnamed",
		"active":               "Active",
		"revoked":              "Revoked",
		"revoke":               "Revoke",
		"no_key":               "No key in this environment.",
		"new_key":              "New key",
		"environment":          "Environment",
		"key_environment_help": "A TEST key reaches the sandbox only; a LIVE key moves real money.",
		"create_key":           "Create the key",
		"scope_BOTH":           "Collections and payouts",
		"scope_PAYIN":          "Collections only",
		"scope_PAYOUT":         "Payouts only",
		"ip_whitelist":         "Allowed IP addresses",
		"ip_whitelist_help":    "Payouts, settlements and transfers asked for with an API key are accepted from these addresses only.",
		"no_ip":                "No address: payouts by API key are refused.",
		"add_ip":               "Add the address",
		"ip_address":           "IP address or CIDR range",
		"ip_address_help":      "For example 203.0.113.9 or 203.0.113.0/24 (IPv4 or IPv6).",
		"remove":               "Remove",

		"done_key_revoked":       "Key revoked: it no longer allows any call.",
		"done_ip_added":          "Address added.",
		"done_ip_removed":        "Address removed.",
		"done_endpoint_enabled":  "Endpoint enabled again.",
		"done_endpoint_disabled": "Endpoint disabled: it receives nothing any more.",
		"done_endpoint_deleted":  "Endpoint deleted.",
		"done_redelivered":       "New delivery queued: it shows in the log within a few seconds.",
		"done_dossier_submitted": "Dossier sent. Now add your supporting documents.",
		"done_document_added":    "Document added to the dossier.",
		"done_settings_saved":    "Settings saved.",
	},
}
