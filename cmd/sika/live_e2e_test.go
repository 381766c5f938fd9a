package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway/mtnmomo/mtnfake"
	"github.com/sikahq/sika/gateway/orange/orangefake"
	"github.com/sikahq/sika/gateway/sandbox"
	"github.com/sikahq/sika/gateway/wave/wavefake"
	"github.com/sikahq/sika/internal/testenv"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

// liveCase is one LIVE operator driven end to end: its fake, the variables that configure the
// service for it, and a number on one of its networks.
type liveCase struct {
	gateway string
	vars    map[string]string
	country string
	network string
	phone   string // national number of the customer and of the payee
	// customer plays the customer after the answer to softpay (redirect flows pay on the
	// operator's page); nil when the operator decides by itself.
	customer func(t *testing.T, next map[string]string)
	// signed: the operator's callback is signed, so it decides the payment by itself (without
	// it, the outcome comes from a status read).
	signed bool
	// noPayouts: the operator only collects; a LIVE payout to its network is refused.
	noPayouts bool
}

// TestLiveEndToEnd configures the service for LIVE through its environment variables only, as an
// operator would, with every operator's fake in place of the real API, and runs, per operator, a
// LIVE payment and a LIVE payout through the API, the workflows and the adapter: the payment
// succeeds and credits the LIVE wallet, the payout is paid from it, and the ledger holds.
func TestLiveEndToEnd(t *testing.T) {
	ctx := t.Context()
	mtn := mtnfake.New(t)
	wv := wavefake.New(t)
	om := orangefake.New(t)
	var base string // the API's URL, known once it listens
	cases := []liveCase{{
		gateway: liveMTN, country: "BJ", network: "MTN_BJ", phone: "97000000",
		vars: map[string]string{
			"SIKA_MTNMOMO_BASE_URL": mtn.URL(), "SIKA_MTNMOMO_API_USER": mtnfake.APIUser, "SIKA_MTNMOMO_API_KEY": mtnfake.APIKey,
			"SIKA_MTNMOMO_COLLECTION_KEY": mtnfake.CollectionKey, "SIKA_MTNMOMO_DISBURSEMENT_KEY": mtnfake.DisbursementKey,
			"SIKA_MTNMOMO_TARGET_ENVIRONMENTS": "BJ=" + mtnfake.Environment,
		},
	}, {
		gateway: liveWave, country: "SN", network: "WAVE_SN", phone: "770000000", signed: true,
		vars: map[string]string{
			"SIKA_WAVE_BASE_URL": wv.URL(), "SIKA_WAVE_API_KEY": wavefake.CheckoutKey, "SIKA_WAVE_PAYOUT_API_KEY": wavefake.PayoutKey,
			"SIKA_WAVE_WEBHOOK_SECRET": wavefake.WebhookSecret, "SIKA_WAVE_SUCCESS_URL": "https://shop.example/paid/{reference}",
			"SIKA_WAVE_ERROR_URL": "https://shop.example/failed/{reference}",
		},
		// The customer pays on Wave, which reports it with a signed webhook; an event about
		// nothing of ours is acknowledged too.
		customer: func(t *testing.T, next map[string]string) {
			require.Equal(t, "redirect", next["type"])
			require.NotEmpty(t, next["url"], "the answer carries Wave's launch URL")
			wv.Pay(next["url"])
			require.NoError(t, wv.SendWebhook(base+"/gateway-callbacks/wave/", next["url"]))
			body := []byte(`{"id":"AE_test","type":"merchant.payment_received","data":{}}`)
			header := wavefake.Sign(body, time.Now(), wavefake.WebhookSecret)
			header.Set("Content-Type", "application/json")
			req, err := http.NewRequestWithContext(t.Context(), "POST", base+"/gateway-callbacks/wave/", bytes.NewReader(body))
			require.NoError(t, err)
			req.Header = header
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.Equal(t, http.StatusOK, resp.StatusCode, "an authentic event about nothing of ours is acknowledged")
		},
	}, {
		gateway: liveOrange, country: "CI", network: "ORANGE_CI", phone: "0707000000", noPayouts: true,
		vars: map[string]string{
			"SIKA_ORANGE_BASE_URL": om.URL(), "SIKA_ORANGE_CLIENT_ID": orangefake.ClientID,
			"SIKA_ORANGE_CLIENT_SECRET": orangefake.ClientSecret, "SIKA_ORANGE_MERCHANT_KEY": orangefake.MerchantKey,
			"SIKA_ORANGE_RETURN_URL": "https://shop.example/orange/return", "SIKA_ORANGE_CANCEL_URL": "https://shop.example/orange/cancel",
		},
		// The customer pays on Orange's page; Orange's notification (authenticated by its
		// notif_token, unsigned) makes the service confirm with a status read at once.
		customer: func(t *testing.T, next map[string]string) {
			require.Equal(t, "redirect", next["type"])
			require.NotEmpty(t, next["url"], "the answer carries Orange's payment page")
			om.Pay(next["url"])
			require.NoError(t, om.Notify(next["url"]))
		},
	}}

	env := testenv.Current()
	addr, err := env.TemporalAddress()
	require.NoError(t, err)
	secret := "live e2e sandbox secret"
	sb := httptest.NewServer(sandbox.NewServer(sandbox.Config{Gateways: sandbox.DefaultGateways(secret), Logger: slog.New(slog.DiscardHandler)}))
	defer sb.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	base = "http://" + ln.Addr().String()
	vars := map[string]string{
		"DATABASE_URL": env.DatabaseURL, "TEMPORAL_ADDRESS": addr, "SIKA_SANDBOX_URL": sb.URL, "SIKA_SANDBOX_SECRET": secret,
		"SIKA_TASK_QUEUE": workflows.TaskQueue, "SIKA_JWT_SECRET": "live e2e jwt secret of 32 bytes or more", "SIKA_PAYLOAD_KEYS": testPayloadKeys(t),
		"SIKA_PUBLIC_URL": base, "SIKA_LOG_LEVEL": "warn",
	}
	for _, c := range cases {
		for k, v := range c.vars {
			vars[k] = v
		}
	}
	cfg, err := loadConfig(func(k string) string { return vars[k] })
	require.NoError(t, err)
	for _, c := range cases {
		require.Contains(t, cfg.Live.names(), c.gateway)
	}
	logger := slog.New(slog.DiscardHandler)
	st, err := openStore(ctx, cfg, logger)
	require.NoError(t, err)
	defer st.Close()
	tc, err := dialTemporal(ctx, cfg, logger, nil)
	require.NoError(t, err)
	defer tc.Close()
	run, stop := context.WithCancel(context.Background())
	apiDone, workerDone := make(chan error, 1), make(chan error, 1)
	go func() { apiDone <- serveAPI(run, cfg, st, tc, nil, ln, logger) }()
	go func() { workerDone <- runWorker(run, cfg, st, tc, nil, logger) }()
	defer func() { stop(); <-apiDone; <-workerDone }()

	// A merchant whose KYC was approved, with a LIVE key, calling from a whitelisted address.
	_, merchant, err := st.RegisterMember(ctx, uuid.NewString()+"@example.com", "x", "Live", "", &store.NewMerchant{Name: "Live shop", Country: "BJ"})
	require.NoError(t, err)
	_, err = st.Pool().Exec(ctx, `UPDATE merchants SET kyc_status = 'VERIFIED', is_active = true WHERE id = $1`, merchant.ID)
	require.NoError(t, err)
	key, err := st.CreateAPIKey(ctx, merchant.ID, sika.EnvironmentLive, sika.ScopeBoth, "live e2e", nil)
	require.NoError(t, err)
	_, err = st.AddIPWhitelistEntry(ctx, merchant.ID, sika.EnvironmentLive, netip.MustParsePrefix("127.0.0.1/32"), "live e2e")
	require.NoError(t, err)
	call := func(t *testing.T, method, path string, body any) (int, json.RawMessage) {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(raw))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+key.Secret)
		req.Header.Set("Idempotency-Key", uuid.NewString())
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out struct {
			Data  json.RawMessage `json:"data"`
			Error json.RawMessage `json:"error"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		if out.Data == nil {
			return resp.StatusCode, out.Error
		}
		return resp.StatusCode, out.Data
	}
	final := func(t *testing.T, id uuid.UUID) sika.TransactionDetail {
		t.Helper()
		var d sika.TransactionDetail
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			var err error
			d, err = st.TransactionDetail(ctx, merchant.ID, sika.EnvironmentLive, id)
			require.NoError(c, err)
			assert.NotEqual(c, sika.StatusPending, d.Status)
		}, 60*time.Second, 100*time.Millisecond)
		return d
	}

	for _, c := range cases {
		t.Run(c.gateway, func(t *testing.T) {
			status, raw := call(t, "POST", "/api/v1/payments/softpay/", map[string]string{"amount": "10000", "currency": "XOF",
				"country": c.country, "network": c.network, "customer_phone": c.phone, "customer_name": "Live customer"})
			require.Equal(t, http.StatusCreated, status, "%s", raw)
			var p struct {
				ID         uuid.UUID         `json:"id"`
				Status     string            `json:"status"`
				NextAction map[string]string `json:"next_action"`
			}
			require.NoError(t, json.Unmarshal(raw, &p))
			if c.customer != nil {
				c.customer(t, p.NextAction)
			}
			d := final(t, p.ID)
			require.Equal(t, sika.StatusSuccess, d.Status, "%+v", d)
			require.Len(t, d.Attempts, 1)
			assert.Equal(t, c.gateway, d.Attempts[0].Gateway)
			last := d.StatusLogs[len(d.StatusLogs)-1]
			if c.signed {
				assert.Equal(t, sika.TriggerWebhookCallback, last.TriggeredBy, "the signed callback decided it")
			} else {
				assert.Equal(t, sika.TriggerSystem, last.TriggeredBy, "a status read decided it")
			}

			status, raw = call(t, "POST", "/api/v1/payouts/initialize/", map[string]string{"amount": "2000", "currency": "XOF",
				"country": c.country, "method": c.network, "recipient": c.phone, "recipient_name": "Live payee"})
			if c.noPayouts {
				assert.Equal(t, http.StatusUnprocessableEntity, status, "%s", raw)
				assert.Contains(t, string(raw), "network_unavailable")
				return
			}
			require.Equal(t, http.StatusCreated, status, "%s", raw)
			require.NoError(t, json.Unmarshal(raw, &p))
			d = final(t, p.ID)
			require.Equal(t, sika.StatusSuccess, d.Status, "%+v", d)
			require.Len(t, d.Attempts, 1)
			assert.Equal(t, c.gateway, d.Attempts[0].Gateway)
		})
	}
	disc, err := st.CheckLedger(ctx)
	require.NoError(t, err)
	assert.Nil(t, disc)
	var live, test int
	require.NoError(t, st.Pool().QueryRow(ctx, `SELECT count(*) FILTER (WHERE environment = 'LIVE'), count(*) FILTER (WHERE environment = 'TEST')
		FROM ledger_entries WHERE merchant_id = $1`, merchant.ID).Scan(&live, &test))
	assert.Positive(t, live)
	assert.Zero(t, test, "LIVE money never touches TEST")
}
