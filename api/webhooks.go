package api

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/webhook"
)

// secretOverlap is how long a rotated-out secret keeps signing (contract §9).
const secretOverlap = 24 * time.Hour

type webhookRequest struct {
	URL         *string `json:"url"`
	Description *string `json:"description"`
	Environment *string `json:"environment"`
	IsActive    *bool   `json:"is_active"`
	PaymentLink *string `json:"payment_link"`
}

// checkEndpointURL validates a webhook URL for the environment: https in LIVE, and never an
// internal address unless the operator allows them.
func (s *Server) checkEndpointURL(r *http.Request, raw string, env sika.Environment) error {
	if strings.TrimSpace(raw) == "" {
		return sika.FieldError("url", sika.MsgRequired)
	}
	if len(raw) > 2048 {
		return sika.FieldError("url", msgTooLong(2048))
	}
	if err := s.cfg.WebhookGuard.CheckURL(r.Context(), raw, env == sika.EnvironmentLive); err != nil {
		return sika.FieldError("url", strings.TrimPrefix(err.Error(), webhook.ErrForbiddenDestination.Error()+": ")+".")
	}
	return nil
}

// createWebhook registers an endpoint in the dashboard's environment and shows its signing
// secret once.
func (s *Server) createWebhook(w http.ResponseWriter, r *http.Request, req webhookRequest) error {
	p := principalFrom(r.Context())
	e := sika.WebhookEndpoint{Merchant: p.Merchant.ID, Environment: p.Environment, IsActive: true, CreatedByMember: &p.Member.ID}
	var v sika.Validation
	if req.URL == nil {
		v.Add("url", sika.MsgRequired)
	} else if err := s.checkEndpointURL(r, *req.URL, p.Environment); err != nil {
		return err
	} else {
		e.URL = strings.TrimSpace(*req.URL)
	}
	if req.Environment != nil && sika.Environment(strings.ToUpper(*req.Environment)) != p.Environment {
		v.Add("environment", "Must be the session's environment ("+string(p.Environment)+"); choose it with X-Environment.")
	}
	if req.Description != nil {
		maxLength(&v, "description", *req.Description, 500)
		e.Description = strings.TrimSpace(*req.Description)
	}
	if req.IsActive != nil {
		e.IsActive = *req.IsActive
	}
	if req.PaymentLink != nil && *req.PaymentLink != "" {
		id, err := uuid.Parse(*req.PaymentLink)
		if err != nil {
			v.Add("payment_link", sika.MsgInvalidUUID)
		} else if _, err := s.store.PaymentLinkByID(r.Context(), p.Merchant.ID, p.Environment, id); sika.ErrorCode(err) == sika.CodeNotFound {
			// Another merchant's link, another environment's, or none: the endpoint would never
			// receive an event (they are the merchant's own, in its environment).
			v.Add("payment_link", "Unknown payment link: one of this merchant's links in "+string(p.Environment)+".")
		} else if err != nil {
			return err
		} else {
			e.PaymentLink = &id
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return err
	}
	created, err := s.store.CreateWebhookEndpoint(r.Context(), e, secret)
	return reply(w, http.StatusCreated, created, err)
}

func (s *Server) listWebhooks(w http.ResponseWriter, r *http.Request) error {
	return tenantList(s, w, r, s.store.ListWebhookEndpoints)
}

func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) error {
	return writeTenantObject(w, r, "Webhook endpoint", s.store.WebhookEndpointByID)
}

// webhookPatchRequest is what an update may change; an endpoint's payment link is fixed at
// registration (the field is unknown here).
type webhookPatchRequest struct {
	URL         *string `json:"url"`
	Description *string `json:"description"`
	Environment *string `json:"environment"`
	IsActive    *bool   `json:"is_active"`
}

func (s *Server) patchWebhook(w http.ResponseWriter, r *http.Request) error {
	current, err := tenantObject(r, "Webhook endpoint", s.store.WebhookEndpointByID)
	if err != nil {
		return err
	}
	merchant, env := tenant(r.Context())
	var req webhookPatchRequest
	if _, err := decodeUpdateBody(r, &req, current); err != nil {
		return err
	}
	if req.Environment != nil && sika.Environment(strings.ToUpper(*req.Environment)) != env {
		return sika.FieldError("environment", "Must be the session's environment ("+string(env)+"); an endpoint never changes environment.")
	}
	if req.URL != nil {
		if err := s.checkEndpointURL(r, *req.URL, env); err != nil {
			return err
		}
		trimmed := strings.TrimSpace(*req.URL)
		req.URL = &trimmed
	}
	if req.Description != nil && len([]rune(*req.Description)) > 500 {
		return sika.FieldError("description", msgTooLong(500))
	}
	e, err := s.store.UpdateWebhookEndpoint(r.Context(), merchant, env, current.ID, store.EndpointPatch{URL: req.URL, Description: req.Description, IsActive: req.IsActive})
	return reply(w, http.StatusOK, e, err)
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) error {
	return deleteTenantObject(w, r, "Webhook endpoint", s.store.DeleteWebhookEndpoint)
}

// rotateWebhookSecret gives an endpoint a new secret, shown once; the old one keeps signing
// (a second signature) for 24 hours so the merchant can switch without losing a delivery.
func (s *Server) rotateWebhookSecret(w http.ResponseWriter, r *http.Request) error {
	id, err := actionID(r, "Webhook endpoint")
	if err != nil {
		return err
	}
	secret, err := webhook.NewSecret()
	if err != nil {
		return err
	}
	merchant, env := tenant(r.Context())
	e, err := s.store.RotateWebhookSecret(r.Context(), merchant, env, id, secret, secretOverlap)
	return reply(w, http.StatusOK, e, err)
}

var eventIDPattern = regexp.MustCompile(`^evt_[0-9A-Za-z]{26}$`)

// callerScope is the scope of the caller's API key ("" for a dashboard session, which sees
// every event): the event list and the event routes show an API key only the events its scope
// allows, as the live stream does (a PAYIN key no payout event).
func callerScope(ctx context.Context) sika.Scope {
	if p := principalFrom(ctx); p != nil && p.Kind == PrincipalAPIKey {
		return p.Scope
	}
	return ""
}

// eventFor loads an event of the caller by its path id (not_found for an event its key's scope
// does not allow).
func (s *Server) eventFor(r *http.Request) (sika.Event, error) {
	id := mux.Vars(r)["id"]
	if !eventIDPattern.MatchString(id) {
		return sika.Event{}, sika.NotFound("Event")
	}
	merchant, env := tenant(r.Context())
	ev, err := s.store.EventByID(r.Context(), merchant, env, callerScope(r.Context()), id)
	ev.Merchant = merchant
	return ev, err
}

func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) error {
	req, err := s.parseCursorPage(r)
	if err != nil {
		return err
	}
	merchant, env := tenant(r.Context())
	items, more, err := s.store.ListEvents(r.Context(), merchant, env, callerScope(r.Context()), keysetOf(req))
	if err != nil {
		return err
	}
	events := make([]any, len(items))
	keys := map[string]Cursor{}
	for i, e := range items {
		events[i] = e.Event
		keys[e.ID] = Cursor{CreatedAt: e.CreatedAt, ID: e.Key}
	}
	writeData(w, http.StatusOK, s.newCursorPage(r, req, events, more, func(v any) Cursor { return keys[v.(sika.Event).ID] }))
	return nil
}

func (s *Server) getEvent(w http.ResponseWriter, r *http.Request) error {
	ev, err := s.eventFor(r)
	return reply(w, http.StatusOK, ev, err)
}

func (s *Server) listEventDeliveries(w http.ResponseWriter, r *http.Request) error {
	ev, err := s.eventFor(r)
	if err != nil {
		return err
	}
	items, err := s.store.EventDeliveries(r.Context(), ev.ID)
	return reply(w, http.StatusOK, listOf(items), err)
}

// redeliverRequest is the optional body of a redelivery: endpoint narrows it to one endpoint
// (the dashboard's "redeliver" on a row of an endpoint's delivery log).
type redeliverRequest struct {
	Endpoint *string `json:"endpoint"`
}

// redeliverEvent queues a new delivery of an event to every endpoint that matches it now, or
// to the one endpoint the body names: an endpoint of another merchant or environment is not
// found; a disabled one, or one scoped to another payment link, cannot take the event.
func (s *Server) redeliverEvent(w http.ResponseWriter, r *http.Request, req redeliverRequest) error {
	ev, err := s.eventFor(r)
	if err != nil {
		return err
	}
	merchant, env := tenant(r.Context())
	ev.Environment = env
	var endpoint *uuid.UUID
	if req.Endpoint != nil {
		id, err := uuid.Parse(*req.Endpoint)
		if err != nil {
			return sika.FieldError("endpoint", sika.MsgInvalidUUID)
		}
		e, err := s.store.WebhookEndpointByID(r.Context(), merchant, env, id)
		if err != nil {
			return err
		}
		if !e.IsActive {
			return sika.FieldError("endpoint", "The endpoint is disabled: enable it before redelivering to it.")
		}
		endpoint = &e.ID
	}
	n, err := s.store.Redeliver(r.Context(), ev, uuid.NewString(), endpoint)
	if err != nil {
		return err
	}
	if endpoint != nil && n == 0 {
		return sika.FieldError("endpoint", "The endpoint does not receive this event (it is scoped to another payment link).")
	}
	writeData(w, http.StatusAccepted, map[string]any{"event": ev.ID, "queued": n})
	return nil
}
