package dashboard

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// createEndpoint registers a webhook endpoint by POST /merchant-webhooks/ (the API checks the
// URL: https in LIVE, no internal address) and shows its signing secret in this answer only.
func (a *App) createEndpoint(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(formValues(r, "url", "description"))
	var e sika.WebhookEndpoint
	if err := a.call(r, v, http.MethodPost, "/merchant-webhooks/", nil, f.Values, "", &e); err != nil {
		return f.again(v.Lang, err, func() error { return a.renderDevelopers(w, r, v, f.Status, &developersData{EndpointForm: f}) })
	}
	return a.renderDevelopers(w, r, v, http.StatusCreated, &developersData{NewEndpoint: &e})
}

// endpointData is an endpoint's page: the endpoint, its delivery log newest first, and a
// secret the API has just answered (after a rotation: shown once).
type endpointData struct {
	Endpoint   sika.WebhookEndpoint
	Deliveries []store.EndpointDelivery
	// Newest and Next link the log's first page (from a later one) and its next.
	Newest, Next string
	Secret       string
	Notice       string
	Refused      string
	Redeliver    *formState
}

// endpoint shows a webhook endpoint of the environment with its delivery log: each attempt's
// event, response code, time taken and the start of the answer.
func (a *App) endpoint(w http.ResponseWriter, r *http.Request, v *visit) error {
	return a.renderEndpoint(w, r, v, http.StatusOK, &endpointData{Notice: notice(r), Refused: refusal(r, v)})
}

func (a *App) renderEndpoint(w http.ResponseWriter, r *http.Request, v *visit, status int, d *endpointData) error {
	id, err := webapp.PathID(r, "Webhook endpoint")
	if err != nil {
		return err
	}
	if d.Endpoint, err = a.cfg.Store.WebhookEndpointByID(r.Context(), v.merchant.ID, v.env, id); err != nil {
		return err
	}
	req := store.KeysetRequest{Limit: logSize}
	if r.Method == http.MethodGet {
		if req, err = logPage(r, logSize, sika.NotFound("Page")); err != nil {
			return err
		}
	}
	var more bool
	if d.Deliveries, more, err = a.cfg.Store.EndpointDeliveries(r.Context(), v.merchant.ID, v.env, id, req); err != nil {
		return err
	}
	d.Newest, d.Next = logLinks(endpointPath(id.String()), req, d.Deliveries, more, func(x store.EndpointDelivery) string {
		return keysetPosition(x.CreatedAt, x.ID)
	})
	return a.render(w, r, status, "webhook_endpoint", &view{visit: v, Title: "endpoint_title", Nav: "developers", Data: d})
}

func endpointPath(id string) string { return Prefix + "developers/webhooks/" + id + "/" }

// rotateEndpointSecret gives the endpoint a new secret by POST
// /merchant-webhooks/{id}/rotate-secret/ and shows it in this answer only; the old one keeps
// signing for 24 hours (the API's rule).
func (a *App) rotateEndpointSecret(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Webhook endpoint")
	if err != nil {
		return err
	}
	var e sika.WebhookEndpoint
	if err := a.call(r, v, http.MethodPost, "/merchant-webhooks/"+id.String()+"/rotate-secret/", nil, nil, "", &e); err != nil {
		return refusedTo(w, r, endpointPath(id.String()), err)
	}
	return a.renderEndpoint(w, r, v, http.StatusOK, &endpointData{Secret: e.SigningSecret})
}

// setEndpointActive disables or enables an endpoint by PATCH /merchant-webhooks/{id}/.
func (a *App) setEndpointActive(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Webhook endpoint")
	if err != nil {
		return err
	}
	active := r.PostFormValue("is_active") == "true"
	done := "done_endpoint_disabled"
	if active {
		done = "done_endpoint_enabled"
	}
	page := endpointPath(id.String())
	return a.press(w, r, v, http.MethodPatch, "/merchant-webhooks/"+id.String()+"/", map[string]any{"is_active": active}, page, page, done)
}

// deleteEndpoint deletes an endpoint by DELETE /merchant-webhooks/{id}/: it receives nothing
// more; its delivery log stays in the events'.
func (a *App) deleteEndpoint(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Webhook endpoint")
	if err != nil {
		return err
	}
	return a.press(w, r, v, http.MethodDelete, "/merchant-webhooks/"+id.String()+"/", nil, endpointPath(id.String()), Prefix+"developers/", "done_endpoint_deleted")
}

// redeliverToEndpoint delivers one event of the endpoint's log to it again, by POST
// /events/{id}/redeliver/ with the endpoint: a new attempt shows in the log once made.
func (a *App) redeliverToEndpoint(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Webhook endpoint")
	if err != nil {
		return err
	}
	f := newForm(formValues(r, "event"))
	if f.Val("event") == "" {
		return sika.NotFound("Event")
	}
	return a.submit(w, r, v, f, http.MethodPost, "/events/"+url.PathEscape(f.Val("event"))+"/redeliver/", map[string]any{"endpoint": id.String()},
		endpointPath(id.String()), "done_redelivered", func() error {
			return a.renderEndpoint(w, r, v, f.Status, &endpointData{Redeliver: f})
		})
}

// eventsData is a page of the event log.
type eventsData struct {
	Events []sika.Event
	// Newest and Next link the log's first page (from a later one) and its next.
	Newest, Next string
}

// events lists the environment's events, newest first, as GET /events/ does.
func (a *App) events(w http.ResponseWriter, r *http.Request, v *visit) error {
	req, err := logPage(r, logSize, sika.NotFound("Page"))
	if err != nil {
		return err
	}
	rows, more, err := a.cfg.Store.ListEvents(r.Context(), v.merchant.ID, v.env, sika.ScopeBoth, req)
	if err != nil {
		return err
	}
	var d eventsData
	for _, e := range rows {
		d.Events = append(d.Events, e.Event)
	}
	d.Newest, d.Next = logLinks(Prefix+"developers/events/", req, rows, more, func(e store.EventKey) string {
		return keysetPosition(e.CreatedAt, e.Key)
	})
	return a.render(w, r, http.StatusOK, "events", &view{visit: v, Title: "events_title", Nav: "developers", Data: d})
}

// eventData is an event's page: its payload as endpoints receive it and its deliveries.
type eventData struct {
	Event      sika.Event
	Payload    string
	Deliveries []sika.WebhookDelivery
	Notice     string
	Refused    string
}

// event shows an event of the environment (GET /events/{id}/) and its delivery attempts to
// every endpoint (GET /events/{id}/deliveries/).
func (a *App) event(w http.ResponseWriter, r *http.Request, v *visit) error {
	ctx := r.Context()
	ev, err := a.cfg.Store.EventByID(ctx, v.merchant.ID, v.env, sika.ScopeBoth, mux.Vars(r)["id"])
	if err != nil {
		return err
	}
	deliveries, err := a.cfg.Store.EventDeliveries(ctx, ev.ID)
	if err != nil {
		return err
	}
	d := eventData{Event: ev, Deliveries: deliveries, Notice: notice(r), Refused: refusal(r, v)}
	var pretty bytes.Buffer
	if json.Indent(&pretty, ev.Data, "", "  ") == nil {
		d.Payload = pretty.String()
	}
	return a.render(w, r, http.StatusOK, "event", &view{visit: v, Title: "event_title", Nav: "developers", Data: d})
}

// redeliverEvent queues the event again to every endpoint that matches it now, by POST
// /events/{id}/redeliver/.
func (a *App) redeliverEvent(w http.ResponseWriter, r *http.Request, v *visit) error {
	id := url.PathEscape(mux.Vars(r)["id"])
	page := Prefix + "developers/events/" + id + "/"
	return a.press(w, r, v, http.MethodPost, "/events/"+id+"/redeliver/", nil, page, page, "done_redelivered")
}

// webhookTranslations are the strings of webhook endpoints, their deliveries and the event log.
var webhookTranslations = webapp.Catalogue{
	"fr": {
		"webhook_endpoints": "Webhooks",
		"webhooks_help":     "Chaque événement de l'environnement est envoyé, signé, à ces adresses.",
		"endpoint_created":  "Point de terminaison créé.",
		"signing_secret":    "Secret de signature",
		"endpoint_open":     "Voir le point de terminaison et ses envois",
		"disabled":          "Désactivé",
		"no_endpoint":       "Aucun webhook dans cet environnement.",
		"new_endpoint":      "Nouveau point de terminaison",
		"endpoint_url":      "URL",
		"endpoint_url_help": "En LIVE : https, et une adresse publique.",
		"create_endpoint":   "Créer le point de terminaison",
		"back_developers":   "← Retour aux développeurs",
		"endpoint_title":    "Point de terminaison",
		"secret_rotated":    "Nouveau secret de signature.",
		"secret_overlap":    "L'ancien signe encore pendant 24 heures.",
		"rotate_secret":     "Changer le secret",
		"disable":           "Désactiver",
		"enable":            "Réactiver",
		"delete":            "Supprimer",
		"deliveries":        "Envois",
		"refresh":           "Actualiser",
		"col_event":         "Événement",
		"col_attempt":       "Tentative",
		"col_response":      "Réponse",
		"col_duration":      "Durée",
		"col_endpoint":      "Point de terminaison",
		"col_type":          "Type",
		"col_event_id":      "Identifiant",
		"no_answer":         "sans réponse",
		"redeliver":         "Renvoyer",
		"redeliver_all":     "Renvoyer à tous les points de terminaison",
		"no_delivery":       "Aucun envoi pour l'instant.",
		"page_newest":       "← Les plus récents",
		"events_title":      "Journal des événements",
		"events_help":       "Les événements de l'environnement, les plus récents d'abord.",
		"no_event":          "Aucun événement pour l'instant.",
		"event_title":       "Événement",
		"back_events":       "← Retour au journal",
		"payload":           "Contenu",
	},
	"en": {
		"webhook_endpoints": "Webhooks",
		"webhooks_help":     "Every event of the environment is sent, signed, to these addresses.",
		"endpoint_created":  "Endpoint created.",
		"signing_secret":    "Signing secret",
		"endpoint_open":     "See the endpoint and its deliveries",
		"disabled":          "Disabled",
		"no_endpoint":       "No webhook in this environment.",
		"new_endpoint":      "New endpoint",
		"endpoint_url":      "URL",
		"endpoint_url_help": "In LIVE: https, and a public address.",
		"create_endpoint":   "Create the endpoint",
		"back_developers":   "← Back to developers",
		"endpoint_title":    "Endpoint",
		"secret_rotated":    "New signing secret.",
		"secret_overlap":    "The old one keeps signing for 24 hours.",
		"rotate_secret":     "Rotate the secret",
		"disable":           "Disable",
		"enable":            "Enable",
		"delete":            "Delete",
		"deliveries":        "Deliveries",
		"refresh":           "Refresh",
		"col_event":         "Event",
		"col_attempt":       "Attempt",
		"col_response":      "Response",
		"col_duration":      "Time",
		"col_endpoint":      "Endpoint",
		"col_type":          "Type",
		"col_event_id":      "Id",
		"no_answer":         "no answer",
		"redeliver":         "Redeliver",
		"redeliver_all":     "Redeliver to every endpoint",
		"no_delivery":       "No delivery yet.",
		"page_newest":       "← Newest",
		"events_title":      "Event log",
		"events_help":       "The events of the environment, newest first.",
		"no_event":          "No event yet.",
		"event_title":       "Event",
		"back_events":       "← Back to the log",
		"payload":           "Payload",
	},
}
