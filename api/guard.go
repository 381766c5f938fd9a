package api

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/google/uuid"
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
	// perm is what a dashboard member's role must allow (sika.MembershipRole.Can); API keys
	// are governed by their scope. A VIEWER may only read, whatever the route.
	perm sika.MerchantPermission
}

// handle mounts a handler at basePath+path behind the middleware chain: authentication, rate
// limit, merchant standing, scope, then the idempotency layer.
func (s *Server) handle(r *mux.Router, method, path string, h handlerFunc, o routeOpts) {
	r.Handle(basePath+path, http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		routeName(req)
		// Answers carry secrets (API keys, session tokens, webhook signing secrets) and merchants'
		// data: no cache keeps them. A handler that streams a file sets its own.
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
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
		if err := checkRole(p, r.Method, o.perm); err != nil {
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
// the RateLimit-* headers; over budget it answers 429 with Retry-After. Unauthenticated routes
// (login, register, the hosted pages' calls) count per client (clientGroup: an IPv6 client by
// its /64).
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
		key, limit = "ip:"+s.clientGroup(r), s.cfg.PublicRateLimitPerMinute
	default:
		return nil
	}
	return s.limit(w, r, key, limit, time.Minute, "Too many requests: the limit is %d per minute.")
}

// limit counts one request for key against limit per window, sets the RateLimit-* headers, and
// over budget answers 429 rate_limited with Retry-After and the message (its %d is the limit).
// A shared limiter that fails (Redis down) does not let the request through unlimited: the
// budget is counted by the process's own limiter until it is back, so each replica still holds
// the limit (up to R times it over R replicas), and logins, registrations and hosted payments
// are never unthrottled.
func (s *Server) limit(w http.ResponseWriter, r *http.Request, key string, limit int, window time.Duration, msg string) error {
	d, err := s.cfg.Limiter.Allow(r.Context(), key, limit, window)
	if err != nil {
		logFrom(r.Context()).Warn("shared rate limiter unavailable; counting in process", "err", err)
		if d, err = s.fallbackLimiter.Allow(r.Context(), key, limit, window); err != nil {
			return fmt.Errorf("rate limit: %w", err)
		}
	}
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(sinceSeconds(d.Reset)))
	if !d.Allowed {
		h.Set("Retry-After", strconv.Itoa(sinceSeconds(d.RetryAfter)))
		return sika.Errorf(sika.CodeRateLimited, msg, d.Limit)
	}
	return nil
}

// clientGroup is the client a per-address budget counts: its IPv4 address, or the /64 of its
// IPv6 address (one subscriber's network: a /64 gives its holder as many addresses as it
// wants).
func (s *Server) clientGroup(r *http.Request) string {
	a := s.clientIP(r)
	if a.Is6() {
		return netip.PrefixFrom(a, 64).Masked().String()
	}
	return a.String()
}

// throttledCallback limits the operators' callbacks per gateway and source (clientGroup) before
// gatewayCallback reads them: a flood of forged callbacks costs a signature check each, and
// the operators' own retry what a 429 refuses. An unknown gateway's name counts as one.
func (s *Server) throttledCallback(w http.ResponseWriter, r *http.Request) {
	routeName(r)
	name := mux.Vars(r)["gateway"]
	if _, err := s.cfg.Gateways.Gateway(name); err != nil {
		name = "unknown"
	}
	if err := s.limit(w, r, "callback:"+name+":"+s.clientGroup(r), s.cfg.CallbackRateLimitPerMinute, time.Minute,
		"Too many callbacks: the limit is %d per minute per gateway and source."); err != nil {
		writeError(w, r, err)
		return
	}
	s.gatewayCallback(w, r)
}

// limitLinkStarts bounds how many payments one client (clientGroup) and one phone number may
// start on a payment link in LinkStartWindow: a stranger holding the link cannot use up its
// usage_limit (which counts every transaction the link generates) with numbers that fail.
func (s *Server) limitLinkStarts(w http.ResponseWriter, r *http.Request, link uuid.UUID, phone string) error {
	window := s.cfg.LinkStartWindow
	if err := s.limit(w, r, "link:"+link.String()+":client:"+s.clientGroup(r), s.cfg.LinkStartsPerClient, window,
		"Too many payments started on this link from this network: the limit is %d per "+window.String()+"."); err != nil {
		return err
	}
	return s.limit(w, r, "link:"+link.String()+":phone:"+phone, s.cfg.LinkStartsPerPhone, window,
		"Too many payments started on this link for this number: the limit is %d per "+window.String()+".")
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

// checkRole refuses a dashboard member whose role in the merchant does not allow the route
// (403 role_forbidden): the route's permission, and for a VIEWER any write.
func checkRole(p *Principal, method string, perm sika.MerchantPermission) error {
	if p.Kind != PrincipalDashboard || p.Merchant == nil {
		return nil
	}
	if perm != "" && !p.Role.Can(perm) {
		return sika.ErrMerchantRole(p.Role, perm)
	}
	if p.Role == sika.RoleViewer && method != http.MethodGet && method != http.MethodHead {
		return sika.Errorf(sika.CodeRoleForbidden, "Your role in this merchant (VIEWER) may only read.")
	}
	return nil
}
