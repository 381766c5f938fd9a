package api

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"

	"github.com/sikahq/sika"
)

// access is who may call a route.
type access int

const (
	// accessPublic: no credentials.
	accessPublic access = iota
	// accessMember: a dashboard session; no merchant is needed (the member's own routes).
	accessMember
	// accessMerchant: an API key or a dashboard session, acting for one merchant.
	accessMerchant
	// accessDashboard: a dashboard session acting for one merchant; an API key gets 403
	// dashboard_only.
	accessDashboard
	// accessStaff: a dashboard session of a staff member; others get 403 admin_only.
	accessStaff
)

// sessionClaims are the claims of a dashboard token.
type sessionClaims struct {
	Staff bool `json:"staff,omitempty"`
	jwt.RegisteredClaims
}

const tokenIssuer = "sika"

// issueToken signs a dashboard session token for a member.
func (s *Server) issueToken(m sika.Member) (string, time.Time, error) {
	now := s.cfg.Now().UTC()
	exp := now.Add(s.cfg.TokenTTL).Truncate(time.Second)
	claims := sessionClaims{Staff: m.IsStaff, RegisteredClaims: jwt.RegisteredClaims{
		Issuer: tokenIssuer, Subject: m.ID.String(), ID: uuid.NewString(),
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(exp),
	}}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(s.cfg.JWTSecret)
	return tok, exp, err
}

// parseToken verifies a dashboard token and returns its member id.
func (s *Server) parseToken(raw string) (uuid.UUID, error) {
	var claims sessionClaims
	_, err := jwt.ParseWithClaims(raw, &claims, func(*jwt.Token) (any, error) { return s.cfg.JWTSecret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}), jwt.WithIssuer(tokenIssuer),
		jwt.WithExpirationRequired(), jwt.WithTimeFunc(s.cfg.Now))
	if errors.Is(err, jwt.ErrTokenExpired) {
		return uuid.Nil, sika.Errorf(sika.CodeTokenExpired, "The session token has expired; log in again.")
	}
	if err != nil {
		return uuid.Nil, errInvalidCredentials
	}
	id, err := uuid.Parse(claims.Subject)
	if err != nil {
		return uuid.Nil, errInvalidCredentials
	}
	return id, nil
}

var errInvalidCredentials = sika.Errorf(sika.CodeInvalidCredentials, "Invalid API key or session token.")

// authenticate resolves the caller of a non-public route and the tenancy it acts in.
func (s *Server) authenticate(r *http.Request, a access) (*Principal, error) {
	if m := webMember(r.Context()); m != nil {
		// An in-process call of the dashboard (CallAsMember): its member signed in by browser
		// session, and is read again so that a member removed meanwhile is refused.
		return s.memberPrincipal(r, m.ID, a)
	}
	raw := r.Header.Get("Authorization")
	if raw == "" {
		return nil, sika.Errorf(sika.CodeAuthenticationNeeded, "Authentication credentials were not provided.")
	}
	scheme, cred, ok := strings.Cut(raw, " ")
	cred = strings.TrimSpace(cred)
	if !ok || !strings.EqualFold(scheme, "Bearer") || cred == "" {
		return nil, errInvalidCredentials
	}
	if strings.HasPrefix(cred, "sk_") {
		p, err := s.authenticateAPIKey(r.Context(), cred)
		if err != nil {
			return nil, err
		}
		switch a {
		case accessDashboard, accessMember:
			return nil, sika.Errorf(sika.CodeDashboardOnly, "This operation needs a dashboard session; API keys cannot perform it.")
		case accessStaff:
			return nil, sika.Errorf(sika.CodeAdminOnly, "This operation is reserved to Sika staff.")
		}
		return p, nil
	}
	return s.authenticateSession(r, cred, a)
}

func (s *Server) authenticateAPIKey(ctx context.Context, secret string) (*Principal, error) {
	if _, ok := sika.APIKeyEnvironment(secret); !ok {
		return nil, errInvalidCredentials
	}
	key, merchant, err := s.store.APIKeyWithMerchant(ctx, sika.HashAPIKey(secret))
	if sika.ErrorCode(err) == sika.CodeNotFound {
		return nil, errInvalidCredentials
	}
	if err != nil {
		return nil, err
	}
	if key.RevokedAt != nil {
		return nil, errInvalidCredentials
	}
	if err := s.store.TouchAPIKey(ctx, key.ID, s.cfg.Now()); err != nil {
		logFrom(ctx).Warn("record api key use", "err", err)
	}
	return &Principal{Kind: PrincipalAPIKey, Merchant: &merchant, Environment: key.Environment, Scope: key.Scope, APIKeyID: key.ID}, nil
}

func (s *Server) authenticateSession(r *http.Request, token string, a access) (*Principal, error) {
	memberID, err := s.parseToken(token)
	if err != nil {
		return nil, err
	}
	return s.memberPrincipal(r, memberID, a)
}

// memberPrincipal is the principal of a signed-in member for a route of access a: staff routes
// need a staff member; merchant routes act for the member's merchant named by X-Merchant-Id (the
// first one without it) in the environment of X-Environment (LIVE without it).
func (s *Server) memberPrincipal(r *http.Request, memberID uuid.UUID, a access) (*Principal, error) {
	ctx := r.Context()
	member, err := s.store.MemberByID(ctx, memberID)
	if sika.ErrorCode(err) == sika.CodeNotFound {
		return nil, errInvalidCredentials
	}
	if err != nil {
		return nil, err
	}
	p := &Principal{Kind: PrincipalDashboard, Member: &member, Scope: sika.ScopeBoth}
	switch a {
	case accessMember:
		return p, nil
	case accessStaff:
		if !member.IsStaff {
			return nil, sika.Errorf(sika.CodeAdminOnly, "This operation is reserved to Sika staff.")
		}
		return p, nil
	}
	env := sika.Environment(strings.ToUpper(r.Header.Get("X-Environment")))
	if env == "" {
		env = sika.EnvironmentLive
	}
	if !env.Valid() {
		return nil, sika.FieldError("X-Environment", "Must be TEST or LIVE.")
	}
	p.Environment = env
	merchants, err := s.store.MemberMerchants(ctx, member.ID)
	if err != nil {
		return nil, err
	}
	want := r.Header.Get("X-Merchant-Id")
	for _, mm := range merchants {
		if want == "" || strings.EqualFold(want, mm.ID.String()) {
			m := mm.Merchant
			p.Merchant, p.Role = &m, mm.Role
			return p, nil
		}
	}
	return nil, sika.NotFound("Merchant")
}

// checkMerchantStanding refuses suspended merchants, and LIVE calls of merchants that are not
// yet active (TEST keeps working for them, contract §3). It applies to every API-key call, and
// to dashboard calls that move money (a suspended merchant may still log in and look).
func checkMerchantStanding(p *Principal, movesMoney bool) error {
	if p.Merchant == nil || (p.Kind != PrincipalAPIKey && !movesMoney) {
		return nil
	}
	if p.Merchant.IsSuspended {
		return sika.Errorf(sika.CodeMerchantSuspended, "This merchant account is suspended; contact Sika support.")
	}
	if p.Environment == sika.EnvironmentLive && !p.Merchant.IsActive {
		return sika.Errorf(sika.CodeMerchantInactive, "This merchant account is not active yet: LIVE calls need an approved KYC dossier.")
	}
	return nil
}

// checkScope refuses an API key whose scope does not cover the route.
func checkScope(p *Principal, need sika.Scope) error {
	if need == "" || p.Scope.Allows(need) {
		return nil
	}
	return sika.Errorf(sika.CodeScopeForbidden, "This API key has scope %s; the operation needs %s or BOTH.", p.Scope, need)
}
