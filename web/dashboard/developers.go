package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// developerPages are the page templates of API keys, the IP whitelist, webhook endpoints and
// their deliveries, the event log, KYC and settings.
var developerPages = []string{"developers", "webhook_endpoint", "events", "event", "kyc", "settings"}

// developerRoutes mounts API keys, the IP whitelist, webhook endpoints and their deliveries,
// the event log, KYC and settings. Every form acts through the JSON API (a.call), so its rules
// (validation, the secret shown once, tenancy, dashboard-only routes) are the API's.
func (a *App) developerRoutes(r *mux.Router) {
	get, post := http.MethodGet, http.MethodPost
	const dev = Prefix + "developers/"
	r.Handle(dev, a.forMerchant(a.developers)).Methods(get)
	r.Handle(dev+"api-keys/", a.forMerchant(a.createAPIKey)).Methods(post)
	r.Handle(dev+"api-keys/{id}/revoke/", a.forMerchant(a.revokeAPIKey)).Methods(post)
	r.Handle(dev+"ip-whitelist/", a.forMerchant(a.addIPAddress)).Methods(post)
	r.Handle(dev+"ip-whitelist/{id}/delete/", a.forMerchant(a.deleteIPAddress)).Methods(post)
	r.Handle(dev+"webhooks/", a.forMerchant(a.createEndpoint)).Methods(post)
	r.Handle(dev+"webhooks/{id}/", a.forMerchant(a.endpoint)).Methods(get)
	r.Handle(dev+"webhooks/{id}/rotate-secret/", a.forMerchant(a.rotateEndpointSecret)).Methods(post)
	r.Handle(dev+"webhooks/{id}/active/", a.forMerchant(a.setEndpointActive)).Methods(post)
	r.Handle(dev+"webhooks/{id}/delete/", a.forMerchant(a.deleteEndpoint)).Methods(post)
	r.Handle(dev+"webhooks/{id}/redeliver/", a.forMerchant(a.redeliverToEndpoint)).Methods(post)
	r.Handle(dev+"events/", a.forMerchant(a.events)).Methods(get)
	r.Handle(dev+"events/{id}/", a.forMerchant(a.event)).Methods(get)
	r.Handle(dev+"events/{id}/redeliver/", a.forMerchant(a.redeliverEvent)).Methods(post)

	r.Handle(Prefix+"kyc/", a.forMerchant(a.kyc)).Methods(get)
	r.Handle(Prefix+"kyc/", a.forMerchant(a.submitDossier)).Methods(post)
	r.Handle(Prefix+"kyc/{id}/documents/", a.forUpload(a.uploadDocument)).Methods(post)

	r.Handle(Prefix+"settings/", a.forMerchant(a.settings)).Methods(get)
	r.Handle(Prefix+"settings/", a.forMerchant(a.saveSettings)).Methods(post)
}

// developerStore is what these pages read; *store.Store is it. Every read takes the tenancy
// of the session (a dossier and the team are the merchant's, in both environments).
type developerStore interface {
	ListAPIKeys(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page store.PageRequest) ([]sika.APIKey, int, error)
	ListIPWhitelist(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page store.PageRequest) ([]sika.IPWhitelistEntry, int, error)
	ListWebhookEndpoints(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page store.PageRequest) ([]sika.WebhookEndpoint, int, error)
	WebhookEndpointByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.WebhookEndpoint, error)
	EndpointDeliveries(ctx context.Context, merchantID uuid.UUID, env sika.Environment, endpointID uuid.UUID, req store.KeysetRequest) ([]store.EndpointDelivery, bool, error)
	ListEvents(ctx context.Context, merchantID uuid.UUID, env sika.Environment, scope sika.Scope, req store.KeysetRequest) ([]store.EventKey, bool, error)
	EventByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, scope sika.Scope, id string) (sika.Event, error)
	EventDeliveries(ctx context.Context, eventID string) ([]sika.WebhookDelivery, error)
	ListKYCDossiers(ctx context.Context, merchant uuid.UUID, page store.PageRequest) ([]sika.KYCDossier, int, error)
	MerchantSettings(ctx context.Context, merchantID uuid.UUID, env sika.Environment) (sika.MerchantSettings, error)
	MerchantTeam(ctx context.Context, merchantID uuid.UUID) ([]store.TeamMember, error)
}

// managedListSize bounds the keys, addresses and endpoints a page lists: a merchant has a
// handful of each.
const managedListSize = 100

// logSize is how many deliveries or events a page of a log shows.
const logSize = 25

// doneNotices are the notices a page shows after a form sent the browser back (?done=), by
// their translation keys; any other value shows nothing.
var doneNotices = map[string]bool{
	"done_key_revoked": true, "done_ip_added": true, "done_ip_removed": true, "done_endpoint_enabled": true,
	"done_endpoint_disabled": true, "done_endpoint_deleted": true, "done_redelivered": true, "done_dossier_submitted": true,
	"done_document_added": true, "done_settings_saved": true,
}

// notice is the ?done= notice of a page, or "".
func notice(r *http.Request) string {
	if k := r.URL.Query().Get("done"); doneNotices[k] {
		return k
	}
	return ""
}

// refusedTo sends the browser back to path after the API refused an action of a button (not a
// form: there is nothing to fill again) for a business reason (?refused=<code>), which the page
// says in its language (refusal). Any other error (not found, a bug, the store down) is
// returned for the error page.
func refusedTo(w http.ResponseWriter, r *http.Request, path string, err error) error {
	var e *sika.Error
	if !errors.As(err, &e) || e.Code == sika.CodeNotFound || e.Code == sika.CodeInternal ||
		e.Code == sika.CodeServiceUnavailable || e.Code == sika.CodeValidation {
		return err
	}
	http.Redirect(w, r, query(path, url.Values{"refused": {string(e.Code)}}), http.StatusSeeOther)
	return nil
}

// refusal is the message of a page's ?refused= code in the page's language, or "".
func refusal(r *http.Request, v *visit) string {
	code := r.URL.Query().Get("refused")
	if code == "" {
		return ""
	}
	key := "apierr_" + code
	if _, ok := translations[v.Lang][key]; !ok {
		key = "apierr_other"
	}
	return translate(v.Lang, key)
}

// press does what a button asks (not a form: there is nothing to fill again) by one call of the
// API, then sends the browser to back with the notice done; a refusal goes back to page
// (refusedTo).
func (a *App) press(w http.ResponseWriter, r *http.Request, v *visit, method, path string, body any, page, back, done string) error {
	if err := a.call(r, v, method, path, nil, body, "", nil); err != nil {
		return refusedTo(w, r, page, err)
	}
	backTo(w, r, back, done)
	return nil
}

// submit sends a form by one call of the API, then sends the browser to back with the notice
// done; a refusal draws the form again by page (formState.again).
func (a *App) submit(w http.ResponseWriter, r *http.Request, v *visit, f *formState, method, path string, body any, back, done string, page func() error) error {
	if err := a.call(r, v, method, path, nil, body, "", nil); err != nil {
		return f.again(v.Lang, err, page)
	}
	backTo(w, r, back, done)
	return nil
}

// backTo sends the browser to path with a notice (Post/Redirect/Get: a reload repeats nothing).
func backTo(w http.ResponseWriter, r *http.Request, path, done string) {
	http.Redirect(w, r, query(path, url.Values{"done": {done}}), http.StatusSeeOther)
}

// logPage is the request of a log page: limit rows after its ?after= position (a row's
// position, as keysetPosition writes it), the first page without one; bad is the error of a
// position that cannot be read.
func logPage(r *http.Request, limit int, bad error) (store.KeysetRequest, error) {
	req := store.KeysetRequest{Limit: limit}
	if raw := r.URL.Query().Get(afterParam); raw != "" {
		pos, ok := parsePosition(raw)
		if !ok {
			return req, bad
		}
		req.After = &pos
	}
	return req, nil
}

// logLinks are the links of a log page at here read with req: to the log's first page (from a
// later one), and to the next page, after the last of rows (at writes a row's position), when
// more lie there.
func logLinks[T any](here string, req store.KeysetRequest, rows []T, more bool, at func(T) string) (newest, next string) {
	if req.After != nil {
		newest = here
	}
	if more && len(rows) > 0 {
		next = query(here, url.Values{afterParam: {at(rows[len(rows)-1])}})
	}
	return newest, next
}

// apiCall is a call of the JSON API with a JSON body, for a.send.
func apiCall(method, path string, body any) webapp.APICall {
	return webapp.APICall{Method: method, Path: path, Body: body}
}
