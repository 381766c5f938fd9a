package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
)

// handlerFunc is a route handler; a returned error is rendered by writeError.
type handlerFunc func(http.ResponseWriter, *http.Request) error

// routeOpts is what the middleware chain checks before a handler runs.
type routeOpts struct {
	access access
	// scope is the API-key scope the route needs ("" = any).
	scope sika.Scope
	// idempotent routes accept Idempotency-Key (contract §6).
	idempotent bool
	// throttleByIP limits unauthenticated routes per client address (login, register).
	throttleByIP bool
	// movesMoney routes refuse suspended and (in LIVE) inactive merchants whatever the caller.
	movesMoney bool
	// whitelistedIP routes need, with an API key, a caller address on the merchant's IP
	// whitelist (payouts, settlements, wallet transfers); dashboard calls are exempt.
	whitelistedIP bool
}

// handle mounts a handler at basePath+path behind the middleware chain: authentication, rate
// limit, merchant standing, scope, then the idempotency layer.
func (s *Server) handle(r *mux.Router, method, path string, h handlerFunc, o routeOpts) {
	r.Handle(basePath+path, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		routeName(req)
		if err := s.guard(w, req, h, o); err != nil {
			writeError(w, req, err)
		}
	})).Methods(method)
}

func (s *Server) guard(w http.ResponseWriter, r *http.Request, h handlerFunc, o routeOpts) error {
	var p *Principal
	if o.access != accessPublic {
		var err error
		if p, err = s.authenticate(r, o.access); err != nil {
			return err
		}
		if info, ok := r.Context().Value(ctxRequestInfo).(*requestInfo); ok && p.Merchant != nil {
			info.merchant = p.Merchant.ID
			info.principal = p
		}
		r = r.WithContext(context.WithValue(r.Context(), ctxPrincipal, p))
	}
	if err := s.rateLimit(w, r, p, o); err != nil {
		return err
	}
	if p != nil {
		if err := checkMerchantStanding(p, o.movesMoney); err != nil {
			return err
		}
		if err := checkScope(p, o.scope); err != nil {
			return err
		}
		if o.whitelistedIP && p.Kind == PrincipalAPIKey {
			if err := s.checkWhitelistedIP(r, p); err != nil {
				return err
			}
		}
	}
	if o.idempotent && p != nil && p.Merchant != nil {
		return s.idempotent(w, r, h)
	}
	return h(w, r)
}

// rateLimit counts the request against its account's budget for the current minute and sets
// the RateLimit-* headers; over budget it answers 429 with Retry-After. A limiter that fails
// (Redis down) lets the request through: the limit protects the service, it must not stop it.
func (s *Server) rateLimit(w http.ResponseWriter, r *http.Request, p *Principal, o routeOpts) error {
	var key string
	limit := s.cfg.RateLimitPerMinute
	switch {
	case p != nil && p.Merchant != nil:
		key = "merchant:" + p.Merchant.ID.String()
		if p.Merchant.RateLimitPerMinute != nil {
			limit = *p.Merchant.RateLimitPerMinute
		}
	case p != nil:
		key = "member:" + p.Member.ID.String()
	case o.throttleByIP:
		key, limit = "ip:"+s.clientIP(r).String(), s.cfg.PublicRateLimitPerMinute
	default:
		return nil
	}
	d, err := s.cfg.Limiter.Allow(r.Context(), key, limit, time.Minute)
	if err != nil {
		logFrom(r.Context()).Warn("rate limiter unavailable; request let through", "err", err)
		return nil
	}
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(sinceSeconds(d.Reset)))
	if !d.Allowed {
		h.Set("Retry-After", strconv.Itoa(sinceSeconds(d.RetryAfter)))
		return sika.Errorf(sika.CodeRateLimited, "Too many requests: the limit is %d per minute.", d.Limit)
	}
	return nil
}

// checkWhitelistedIP refuses an API-key call from an address that is not on the merchant's
// whitelist for the environment.
func (s *Server) checkWhitelistedIP(r *http.Request, p *Principal) error {
	ip := s.clientIP(r)
	ok := false
	if ip.IsValid() {
		var err error
		if ok, err = s.store.IPWhitelisted(r.Context(), p.Merchant.ID, p.Environment, ip); err != nil {
			return err
		}
	}
	if !ok {
		return sika.Errorf(sika.CodeIPNotWhitelisted, "Calls from %s are not on this merchant's IP whitelist; add it from the dashboard.", ip)
	}
	return nil
}
