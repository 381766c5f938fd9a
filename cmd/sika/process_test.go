package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway/sandbox"
	"github.com/sikahq/sika/internal/testenv"
	"github.com/sikahq/sika/payloadcodec"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/workflows"
)

// processEnv is what the tests of the processes share: a sandbox operator on loopback, the
// API's listener, the configuration `sika api` and `sika worker` read from vars, and the store.
type processEnv struct {
	cfg  Config
	vars map[string]string
	st   *store.Store
	ln   net.Listener
}

// newProcessEnv starts the sandbox (answering every tick) and opens the store; extra adds or
// overrides variables. Everything is closed when the test ends.
func newProcessEnv(t *testing.T, name string, tick time.Duration, extra map[string]string) *processEnv {
	t.Helper()
	env := testenv.Current()
	addr, err := env.TemporalAddress()
	require.NoError(t, err)
	secret := name + " sandbox secret"
	sb := sandbox.NewServer(sandbox.Config{Gateways: sandbox.DefaultGateways(secret), Tick: tick, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(sb.Close)
	sbSrv := httptest.NewServer(sb)
	t.Cleanup(sbSrv.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	vars := map[string]string{"DATABASE_URL": env.DatabaseURL, "TEMPORAL_ADDRESS": addr, "SIKA_SANDBOX_URL": sbSrv.URL,
		"SIKA_SANDBOX_SECRET": secret, "SIKA_TASK_QUEUE": workflows.TaskQueue, "SIKA_JWT_SECRET": name + " jwt secret of 32 bytes or more", "SIKA_PAYLOAD_KEYS": testPayloadKeys(t),
		"SIKA_PUBLIC_URL": "http://" + ln.Addr().String(), "SIKA_OUTBOX_SWEEP_INTERVAL": "300ms"}
	for k, v := range extra {
		vars[k] = v
	}
	cfg, err := loadConfig(func(k string) string { return vars[k] })
	require.NoError(t, err)
	st, err := openStore(t.Context(), cfg, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return &processEnv{cfg: cfg, vars: vars, st: st, ln: ln}
}

// testPayloadKeys is the SIKA_PAYLOAD_KEYS of this package's processes: one ring for all of
// them, as for the replicas of a deployment (the tests share a task queue, and the schedules one
// of them created run on any of their workers).
func testPayloadKeys(t *testing.T) string {
	t.Helper()
	ring, err := packageRing()
	require.NoError(t, err)
	return ring.Secret()
}

var packageRing = sync.OnceValues(payloadcodec.NewRing)

// merchantKey registers a merchant in Benin and returns it with a TEST key of both scopes.
func (pe *processEnv) merchantKey(t *testing.T, name string) (*sika.Merchant, string) {
	t.Helper()
	_, merchant, err := pe.st.RegisterMember(t.Context(), uuid.NewString()+"@example.com", "x", name, "", &store.NewMerchant{Name: name, Country: "BJ"})
	require.NoError(t, err)
	key, err := pe.st.CreateAPIKey(t.Context(), merchant.ID, sika.EnvironmentTest, sika.ScopeBoth, name, nil)
	require.NoError(t, err)
	return merchant, key.Secret
}

// post sends a JSON body to the API with the key and an Idempotency-Key.
func (pe *processEnv) post(t *testing.T, key, idempotencyKey, path string, body any) (int, map[string]any) {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	req, err := http.NewRequest("POST", pe.vars["SIKA_PUBLIC_URL"]+path, bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Idempotency-Key", idempotencyKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}
