package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
)

type ctxKey int

const (
	ctxLogger ctxKey = iota
	ctxPrincipal
	ctxBody
	ctxRequestInfo
	ctxRequestHash
)

// requestInfo is filled by inner middleware for the access log of the outer one.
type requestInfo struct {
	route    string
	merchant uuid.UUID
	// principal is the authenticated caller, for the merchant's request log.
	principal *Principal
	// unlogged keeps a request out of the request log (the live streams themselves).
	unlogged bool
}

func logFrom(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(ctxLogger).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

// PrincipalKind says how a caller authenticated.
type PrincipalKind int

// Kinds of callers.
const (
	PrincipalAPIKey PrincipalKind = iota + 1
	PrincipalDashboard
)

// Principal is the authenticated caller and the tenancy it acts in.
type Principal struct {
	Kind PrincipalKind
	// Member is the dashboard member (nil for an API key).
	Member *sika.Member
	// Merchant and Environment are the tenancy of the call (zero for member-only routes).
	Merchant    *sika.Merchant
	Environment sika.Environment
	// Scope is the key's scope; a dashboard session may do everything its member may.
	Scope    sika.Scope
	APIKeyID uuid.UUID
	// Role is a dashboard member's role in Merchant ("" for an API key).
	Role sika.MembershipRole
}

func principalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(ctxPrincipal).(*Principal)
	return p
}

// tenant returns the merchant id and environment of the call; routes that use it are
// mounted behind merchant authentication, so both are always set there.
func tenant(ctx context.Context) (uuid.UUID, sika.Environment) {
	p := principalFrom(ctx)
	return p.Merchant.ID, p.Environment
}

// bodyFrom returns the request body already read by the idempotency layer.
func bodyFrom(ctx context.Context) ([]byte, bool) {
	b, ok := ctx.Value(ctxBody).([]byte)
	return b, ok
}

// idempotencyFrom returns the request's Idempotency-Key and the hash the idempotency layer
// computed for it (requestHash of method, path and body), for the records that dedupe on the key
// themselves (store.NewTransaction); both are empty without the header.
func idempotencyFrom(r *http.Request) (key string, fingerprint []byte) {
	fingerprint, _ = r.Context().Value(ctxRequestHash).([]byte)
	return r.Header.Get("Idempotency-Key"), fingerprint
}
