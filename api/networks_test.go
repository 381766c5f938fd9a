package api

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/sandbox"
	"github.com/sikahq/sika/store"
)

// TestPredictNetworkRoute: GET /networks/predict/ tells a number's country and network from the
// numbering plans, as a network of the catalogue with its name, says how sure, and refuses in
// the contract's envelope what it cannot read.
func TestPredictNetworkRoute(t *testing.T) {
	ts := newTestServer(t)
	acct := ts.newAccount(t, true)
	key := acct.key(sika.EnvironmentTest, sika.ScopePayin)
	predict := func(q url.Values) *response {
		return ts.call(t, "GET", "/api/v1/networks/predict/?"+q.Encode(), nil, key...)
	}

	var p networkPredictionJSON
	predict(url.Values{"phone": {"+225 07 07 12 34 56"}}).data(t, &p)
	assert.Equal(t, "CI", p.Country)
	assert.Equal(t, "+2250707123456", p.Phone)
	require.NotNil(t, p.Network)
	assert.Equal(t, "ORANGE_CI", *p.Network)
	require.NotNil(t, p.NetworkName)
	assert.Equal(t, "Orange Money", *p.NetworkName)
	assert.Equal(t, []string{"WAVE_CI"}, p.Alternatives, "Wave pays on numbers of any operator")
	assert.Contains(t, p.Uncertainty, sika.UncertainSharedPrefix)
	assert.Equal(t, sika.ConfidenceMedium, p.Confidence)

	predict(url.Values{"phone": {"0197000123"}, "country": {"bj"}}).data(t, &p)
	assert.Equal(t, "BJ", p.Country)
	assert.Equal(t, "+2290197000123", p.Phone)
	require.NotNil(t, p.Network)
	assert.Equal(t, "MTN_BJ", *p.Network)
	assert.Empty(t, p.Alternatives)

	// With the dashboard's session too (merchant access).
	r := ts.call(t, "GET", "/api/v1/networks/predict/?phone=%2B243810000001", nil, acct.dashboard(sika.EnvironmentLive)...)
	r.data(t, &p)
	require.NotNil(t, p.Network)
	assert.Equal(t, "VODACOM_CD", *p.Network)

	for _, c := range []struct {
		q     url.Values
		field string
	}{
		{url.Values{}, "phone"},
		{url.Values{"phone": {"97000123"}}, "phone"}, // national, and no country
		{url.Values{"phone": {"97 00 00 0a"}, "country": {"BJ"}}, "phone"},
		{url.Values{"phone": {"+33 6 12 34 56 78"}}, "phone"}, // a country Sika does not serve
		{url.Values{"phone": {"97000123"}, "country": {"XX"}}, "country"},
		{url.Values{"phone": {"97000123"}, "country": {"US"}}, "country"}, // in the plans, not the catalogue
	} {
		r := predict(c.q)
		assert.Equal(t, 400, r.Status, "%v: %s", c.q, r.Body)
		assert.Contains(t, r.fields(), c.field, "%v: %s", c.q, r.Body)
	}
	assert.Equal(t, 401, ts.call(t, "GET", "/api/v1/networks/predict/?phone=%2B2250707123456", nil).Status)
}

// TestNetworkAvailability: GET /networks/ and /networks/{id}/ say how each network is doing in
// the caller's environment, from the routing table (a gateway configured here, the Router's
// health) and the answers its gateways gave over the last minutes, recorded on the attempts
// by the functions the activities call.
func TestNetworkAvailability(t *testing.T) {
	ts := availabilityServer(t)
	acct := ts.newAccount(t, true)
	test, live := acct.key(sika.EnvironmentTest, sika.ScopeBoth), acct.key(sika.EnvironmentLive, sika.ScopeBoth)
	ctx := context.Background()
	airtel, err := testStore.NetworkByCode(ctx, "AIRTEL_NE")
	require.NoError(t, err)

	availability := func(headers []string) availabilityJSON {
		t.Helper()
		var n networkJSON
		ts.call(t, "GET", "/api/v1/networks/"+airtel.ID.String()+"/", nil, headers...).data(t, &n)
		var page struct {
			Results []networkJSON `json:"results"`
		}
		ts.call(t, "GET", "/api/v1/networks/?page_size=100", nil, headers...).data(t, &page)
		for _, x := range page.Results {
			if x.Code == "AIRTEL_NE" {
				assert.Equal(t, n.Availability.Status, x.Availability.Status, "the list and the detail agree")
			}
		}
		assert.False(t, n.Availability.CheckedAt.IsZero())
		return n.Availability
	}

	// No traffic: the routing table decides.
	a := availability(test)
	assert.Equal(t, gateway.Operational, a.Status)
	assert.Empty(t, a.Reasons)
	a = availability(live)
	assert.Equal(t, gateway.Down, a.Status, "no LIVE gateway for Airtel Niger")
	assert.Equal(t, []string{gateway.ReasonNoGateway}, a.Reasons)

	// sandbox-a did not take three requests in a row: down, sandbox-b serves.
	for i := 0; i < 3; i++ {
		recordAnswer(t, acct, airtel, sandbox.GatewayA, store.AttemptUpdate{Status: sika.AttemptFailed,
			FailureCode: gateway.FailureGatewayUnavailable, FailureMessage: "The gateway did not accept the request."})
	}
	a = availability(test)
	assert.Equal(t, gateway.Degraded, a.Status)
	assert.Equal(t, []string{gateway.ReasonGatewayDown}, a.Reasons)
	assert.Equal(t, gateway.Down, availability(live).Status, "the environments are apart")

	// It answers again: up, but a quarter or more of the recent requests failed.
	for i := 0; i < 6; i++ {
		recordAnswer(t, acct, airtel, sandbox.GatewayA, store.AttemptUpdate{Status: sika.AttemptPending, GatewayReference: "ref"})
	}
	a = availability(test)
	assert.Equal(t, gateway.Degraded, a.Status)
	assert.Equal(t, []string{gateway.ReasonFailures}, a.Reasons)

	// sandbox-b is down too: the network is.
	for i := 0; i < 3; i++ {
		recordAnswer(t, acct, airtel, sandbox.GatewayB, store.AttemptUpdate{Status: sika.AttemptFailed,
			FailureCode: gateway.FailureGatewayUnavailable, FailureMessage: "The gateway did not accept the request."})
	}
	for i := 0; i < 3; i++ {
		recordAnswer(t, acct, airtel, sandbox.GatewayA, store.AttemptUpdate{Status: sika.AttemptFailed,
			FailureCode: gateway.FailureGatewayUnavailable, FailureMessage: "The gateway did not accept the request."})
	}
	a = availability(test)
	assert.Equal(t, gateway.Down, a.Status)
	assert.Equal(t, []string{gateway.ReasonGatewaysDown}, a.Reasons)

	// Another network's answers are its own.
	var page struct {
		Results []networkJSON `json:"results"`
	}
	ts.call(t, "GET", "/api/v1/networks/?page_size=100", nil, test...).data(t, &page)
	require.Len(t, page.Results, 29)
	for _, n := range page.Results {
		if n.Code == "AIRTEL_GA" {
			assert.Equal(t, gateway.Operational, n.Availability.Status)
		}
	}

	// A switched-off network is down whatever its gateways say.
	_, err = testStore.Pool().Exec(ctx, `UPDATE networks SET is_active = false WHERE code = 'AIRTEL_NE'`)
	require.NoError(t, err)
	testStore.FlushReadCache() // as the notification of the change does, without waiting for it
	t.Cleanup(func() {
		_, err := testStore.Pool().Exec(context.Background(), `UPDATE networks SET is_active = true WHERE code = 'AIRTEL_NE'`)
		require.NoError(t, err)
		testStore.FlushReadCache()
	})
	a = availability(test)
	assert.Equal(t, gateway.Down, a.Status)
	assert.Equal(t, []string{gateway.ReasonNetworkInactive}, a.Reasons)
}

// availabilityServer is a test server with the sandbox's two gateways configured (never
// called) that reads the attempts at every GET /networks/.
func availabilityServer(t *testing.T) *testServer {
	t.Helper()
	var gws []gateway.Gateway
	for _, g := range sandbox.DefaultGateways("availability test secret") {
		gws = append(gws, sandbox.NewClient(sandbox.ClientConfig{Name: g.Name, BaseURL: "http://127.0.0.1:1", APIKey: g.APIKey,
			CallbackSecret: g.CallbackSecret, Timeout: time.Second}))
	}
	return newTestServer(t, func(c *Config) {
		c.Gateways = gateway.NewRouter(gateway.HealthPolicy{}, gws...)
		c.AvailabilityTTL = time.Nanosecond
	})
}

// recordAnswer records a TEST collection on a network with one attempt at a gateway and that
// gateway's answer, through the store functions the payment activities call.
func recordAnswer(t *testing.T, acct *account, n sika.Network, gw string, answer store.AttemptUpdate) {
	t.Helper()
	ctx := context.Background()
	id := uuid.New()
	ref, err := sika.NewReference("TX", time.Now())
	require.NoError(t, err)
	_, err = testStore.Pool().Exec(ctx, `INSERT INTO transactions (id, reference, merchant_id, environment, transaction_type, status,
			requested_amount, client_fee, debited_amount, gateway_fee, platform_fee, net_amount, currency, country,
			network_id, network, customer_phone, fee_charge_mode)
		SELECT $1, $2, $3, 'TEST', 'PAIEMENT', 'PENDING', 1000, 15, 1015, 10, 5, 1000, c.default_currency, c.iso_code, $4, $5,
			'+' || c.calling_code || '96000123', 'ADD_ON'
		FROM countries c WHERE c.id = $6`,
		id, ref, acct.Merchant.ID, n.ID, n.Code, n.Country)
	require.NoError(t, err)
	tx, err := testStore.Transaction(ctx, id)
	require.NoError(t, err)
	attempt, err := testStore.EnsureAttempt(ctx, tx, sika.TransactionAttempt{ID: uuid.New(), Run: 1, Sequence: 1, Gateway: gw, Priority: 1})
	require.NoError(t, err)
	answer.ID = attempt.ID
	require.NoError(t, testStore.UpdateAttempt(ctx, answer))
}
