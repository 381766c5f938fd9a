package main

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// merchantSetup is the merchant under load and what it owns.
type merchantSetup struct {
	merchantID uuid.UUID
	key        string // TEST key, scope BOTH
	// payoutMethods are the verified mobile-money methods settlements go to, by the last three
	// digits of their number (which decide the sandbox's outcome).
	payoutMethods map[string]uuid.UUID
	endpointID    uuid.UUID
}

// settlementSuffixes are the numbers of the settlement payout methods: success, declined,
// ambiguous at initiation, no callback.
var settlementSuffixes = []string{"123", "001", "006", "007"}

// setUpMerchant creates an active merchant with a TEST key and 127.0.0.1 whitelisted (payouts
// by API key need it) in the store, then, through the API as its dashboard would: the webhook
// endpoint (the receiver) and the payout methods, verified by a staff member.
func setUpMerchant(ctx context.Context, h *harness, receiverURL string) (*merchantSetup, error) {
	password, err := sika.RandomBase62(24)
	if err != nil {
		return nil, err
	}
	hash, err := sika.HashPassword(password)
	if err != nil {
		return nil, err
	}
	member, merchant, err := h.st.RegisterMember(ctx, "chaos@sika.local", hash, "Chaos Merchant", "",
		&store.NewMerchant{Name: "Chaos Shop", Country: "BJ", KYCStatus: sika.KYCVerified, IsActive: true})
	if err != nil {
		return nil, fmt.Errorf("register the merchant: %w", err)
	}
	if _, _, err := h.st.RegisterMember(ctx, "staff@sika.local", hash, "Chaos Staff", sika.StaffAdmin, nil); err != nil {
		return nil, fmt.Errorf("register the staff member: %w", err)
	}
	key, err := h.st.CreateAPIKey(ctx, merchant.ID, sika.EnvironmentTest, sika.ScopeBoth, "sikachaos", &member.ID)
	if err != nil {
		return nil, fmt.Errorf("create the API key: %w", err)
	}
	if _, err := h.st.AddIPWhitelistEntry(ctx, merchant.ID, sika.EnvironmentTest, netip.MustParsePrefix("127.0.0.1/32"), "sikachaos"); err != nil {
		return nil, fmt.Errorf("whitelist 127.0.0.1: %w", err)
	}
	s := &merchantSetup{merchantID: merchant.ID, key: key.Secret, payoutMethods: map[string]uuid.UUID{}}
	cl := newAPIClient(h.apiURL, newRequestStats())
	cl.key = key.Secret

	merchantToken, err := login(ctx, cl, "chaos@sika.local", password)
	if err != nil {
		return nil, err
	}
	staffToken, err := login(ctx, cl, "staff@sika.local", password)
	if err != nil {
		return nil, err
	}
	var endpoint struct {
		ID            uuid.UUID `json:"id"`
		SigningSecret string    `json:"signing_secret"`
	}
	if err := setupCall(ctx, cl, call{method: "POST", path: "/api/v1/merchant-webhooks/", bearer: merchantToken, environment: "TEST",
		body: map[string]string{"url": receiverURL + "/hooks", "description": "sikachaos receiver"}}, &endpoint); err != nil {
		return nil, fmt.Errorf("register the webhook endpoint: %w", err)
	}
	h.receiver.setSecret(endpoint.SigningSecret)
	s.endpointID = endpoint.ID
	for i, suffix := range settlementSuffixes {
		var method struct {
			ID uuid.UUID `json:"id"`
		}
		body := map[string]string{"type": "MOBILE_MONEY", "label": "Chaos settlement " + suffix, "network": "MTN_BJ",
			"phone_number": fmt.Sprintf("01980%02d%s", i, suffix)}
		if err := setupCall(ctx, cl, call{method: "POST", path: "/api/v1/merchant-payout-methods/", bearer: merchantToken,
			environment: "TEST", body: body}, &method); err != nil {
			return nil, fmt.Errorf("create a payout method: %w", err)
		}
		if err := setupCall(ctx, cl, call{method: "PATCH", path: "/api/v1/admin/merchant-payout-methods/" + method.ID.String() + "/",
			bearer: staffToken, body: map[string]bool{"is_verified": true}}, nil); err != nil {
			return nil, fmt.Errorf("verify a payout method: %w", err)
		}
		s.payoutMethods[suffix] = method.ID
	}
	return s, nil
}

// login opens a dashboard session and returns its token.
func login(ctx context.Context, cl *apiClient, email, password string) (string, error) {
	var session struct {
		AccessToken string `json:"access_token"`
	}
	if err := setupCall(ctx, cl, call{method: "POST", path: "/api/v1/auth/login/", public: true,
		body: map[string]string{"email": email, "password": password}}, &session); err != nil {
		return "", fmt.Errorf("log in as %s: %w", email, err)
	}
	return session.AccessToken, nil
}

// setupCall makes a set-up request that must succeed, and decodes its data into v (when not nil).
func setupCall(ctx context.Context, cl *apiClient, c call, v any) error {
	c.kind = "setup"
	a, _, err := cl.do(ctx, c)
	if err != nil {
		return err
	}
	if a.status < 200 || a.status > 299 {
		return fmt.Errorf("%s %s: HTTP %d: %.300s", c.method, c.path, a.status, a.body)
	}
	if v == nil {
		return nil
	}
	return a.data(v)
}
