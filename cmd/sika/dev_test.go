package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/internal/testenv"
	"github.com/sikahq/sika/payloadcodec"
	"github.com/sikahq/sika/workflows"
)

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, func(env *testenv.Env) error {
		workflows.TaskQueue = "test-" + env.DatabaseName // packages share the Temporal server
		return nil
	}))
}

// startDev runs `sika dev` in-process against the test Postgres and Temporal, waits for its
// dev.json and returns it with a function that stops it (Ctrl-C) and waits for the exit.
func startDev(t *testing.T, stateDir string) (devInfo, func()) {
	t.Helper()
	addr, err := testenv.Current().TemporalAddress()
	require.NoError(t, err)
	env := map[string]string{
		"DATABASE_URL": testenv.Current().DatabaseURL, "TEMPORAL_ADDRESS": addr,
		"SIKA_STATE_DIR": stateDir, "SIKA_HTTP_ADDR": "127.0.0.1:0", "SIKA_LOG_LEVEL": "warn",
	}
	cfg, err := loadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	infoPath := filepath.Join(stateDir, "dev.json")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runDev(ctx, cfg) }()

	var info devInfo
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		b, err := os.ReadFile(infoPath)
		if !assert.NoError(c, err) || !assert.NoError(c, json.Unmarshal(b, &info)) {
			return
		}
		resp, err := http.Get(info.BaseURL + "/countries/")
		if assert.NoError(c, err) {
			resp.Body.Close()
			assert.Equal(c, 200, resp.StatusCode)
		}
	}, 60*time.Second, 100*time.Millisecond)
	return info, func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("sika dev did not stop within 30 s")
		}
	}
}

func TestDevServesTheDemoMerchantAndReusesItsData(t *testing.T) {
	stateDir := t.TempDir()
	info, stop := startDev(t, stateDir)
	keys := info.Merchant.APIKeys
	for _, k := range []string{keys.TestBoth, keys.TestPayin, keys.TestPayout} {
		assert.Regexp(t, `^sk_test_[0-9A-Za-z]{43}$`, k)
	}
	assert.Regexp(t, `^sk_live_[0-9A-Za-z]{43}$`, keys.LiveBoth)
	assert.NotEmpty(t, info.Admin.Password)
	assert.NotEmpty(t, info.Merchant.ID)

	// The README's first call: the networks page with the demo TEST key, in the envelope.
	req, _ := http.NewRequest("GET", info.BaseURL+"/networks/", nil)
	req.Header.Set("Authorization", "Bearer "+keys.TestBoth)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var page struct {
		Success bool `json:"success"`
		Data    struct {
			Count   int               `json:"count"`
			Results []json.RawMessage `json:"results"`
		} `json:"data"`
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
	resp.Body.Close()
	assert.True(t, page.Success)
	assert.Equal(t, 29, page.Data.Count)
	assert.Len(t, page.Data.Results, 20)

	// The demo merchant is active: its LIVE key works.
	req, _ = http.NewRequest("GET", info.BaseURL+"/networks/", nil)
	req.Header.Set("Authorization", "Bearer "+keys.LiveBoth)
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, 200, resp.StatusCode)
	stop()

	// A second run on the same state prints the same credentials.
	again, stop := startDev(t, stateDir)
	defer stop()
	assert.Equal(t, info.Merchant, again.Merchant)
	assert.Equal(t, info.Admin, again.Admin)
	login, err := http.Post(again.BaseURL+"/auth/login/", "application/json",
		jsonBody(t, map[string]string{"email": again.Admin.Email, "password": again.Admin.Password}))
	require.NoError(t, err)
	login.Body.Close()
	assert.Equal(t, 200, login.StatusCode)
}

func TestLoadConfig(t *testing.T) {
	cfg, err := loadConfig(func(string) string { return "" })
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:8080", cfg.HTTPAddr)
	assert.Equal(t, "http://127.0.0.1:8080", cfg.PublicURL)
	assert.Equal(t, 300, cfg.RateLimitPerMinute)
	assert.Equal(t, 24*time.Hour, cfg.IdempotencyTTL)
	assert.Equal(t, "default", cfg.TemporalNamespace)
	assert.Equal(t, ".sika", cfg.StateDir)
	assert.Equal(t, 10, cfg.StreamsPerMerchant)
	assert.Equal(t, 3, cfg.StreamsPerKey)
	assert.Equal(t, 30*time.Minute, cfg.StreamLifetime)
	tuned, err := loadConfig(func(k string) string {
		return map[string]string{"SIKA_STREAMS_PER_MERCHANT": "40", "SIKA_STREAMS_PER_KEY": "8", "SIKA_STREAM_LIFETIME": "5m"}[k]
	})
	require.NoError(t, err)
	assert.Equal(t, 40, tuned.StreamsPerMerchant)
	assert.Equal(t, 8, tuned.StreamsPerKey)
	assert.Equal(t, 5*time.Minute, tuned.StreamLifetime)
	noKeys := cfg
	noKeys.TemporalAddress = "127.0.0.1:7233"
	_, err = dialTemporal(t.Context(), noKeys, slog.New(slog.DiscardHandler), nil)
	assert.ErrorIs(t, err, payloadcodec.ErrNoKeys, "no Temporal client without payload keys")

	bad := map[string]string{
		"SIKA_RATE_LIMIT_PER_MINUTE": "lots", "SIKA_IDEMPOTENCY_TTL": "1s", "SIKA_TRUSTED_PROXIES": "10.0.0.0/8,nope",
		"SIKA_LOG_LEVEL": "loud", "SIKA_LOG_FORMAT": "xml", "SIKA_PAYLOAD_KEYS": "k1:short",
		"SIKA_STREAMS_PER_MERCHANT": "0", "SIKA_STREAMS_PER_KEY": "many", "SIKA_STREAM_LIFETIME": "1s",
		"TEMPORAL_GRPC_COMPRESSION": "zstd",
	}
	_, err = loadConfig(func(k string) string { return bad[k] })
	require.Error(t, err)
	for name := range bad {
		assert.Contains(t, err.Error(), name)
	}
}

func jsonBody(t *testing.T, v any) *bytes.Reader {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return bytes.NewReader(b)
}
