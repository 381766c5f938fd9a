package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/internal/devstack"
)

// TestClusterSoftpay starts what `sika cluster` starts, with 2 API and 2 worker replicas on the
// Temporal server (bin/temporal-server, a prerequisite of make test) and Postgres, and pushes a
// sandbox softpay to SUCCESS through the one address; then it kills one API replica and the one
// address keeps answering from the other. The cluster's Temporal UI (bin/temporal-ui-server, a
// prerequisite of make test) shows the payment's workflow, where the support console links it.
func TestClusterSoftpay(t *testing.T) {
	start := time.Now()
	bin := filepath.Join(t.TempDir(), "sika")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	vars := map[string]string{"SIKA_LOG_LEVEL": "warn"}
	cfg, err := loadConfig(func(k string) string { return vars[k] })
	require.NoError(t, err)
	level := slog.LevelWarn
	if testing.Verbose() {
		level = slog.LevelInfo
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	c, info, stop, err := startDemoCluster(t.Context(), cfg, bin, t.TempDir(), "", 2, 2, true, true, logger)
	require.NoError(t, err)
	defer stop()
	t.Logf("cluster up in %s: %s, temporal %s", time.Since(start).Round(time.Millisecond), c.BaseURL, c.TemporalAddress)
	key := info.Merchant.APIKeys.TestBoth

	callAs := func(token, method, path string, body any) (int, map[string]any) {
		var rd *bytes.Reader
		if body != nil {
			raw, err := json.Marshal(body)
			require.NoError(t, err)
			rd = bytes.NewReader(raw)
		} else {
			rd = bytes.NewReader(nil)
		}
		req, err := http.NewRequest(method, info.BaseURL+path, rd)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		if method == http.MethodPost {
			req.Header.Set("Idempotency-Key", uuid.NewString())
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out
	}
	call := func(method, path string, body any) (int, map[string]any) { return callAs(key, method, path, body) }

	status, created := call(http.MethodPost, "/payments/softpay/", map[string]any{
		"amount": "1000", "currency": "XOF", "country": "BJ", "network": "MTN_BJ",
		"customer_phone": "97000123", "customer_name": "Koffi Mensah",
	})
	require.Equal(t, http.StatusCreated, status, "softpay: %v", created)
	id := created["data"].(map[string]any)["id"].(string)
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		_, got := call(http.MethodGet, "/transactions/"+id+"/", nil)
		data, _ := got["data"].(map[string]any)
		assert.Equal(ct, "SUCCESS", data["status"])
	}, time.Minute, 250*time.Millisecond)
	t.Logf("softpay %s SUCCESS through the one address after %s", id, time.Since(start).Round(time.Millisecond))

	// The support console links the payment's workflow in the cluster's Temporal UI, which shows it.
	require.NotEmpty(t, c.TemporalUIURL, "no Temporal UI: %v", c.TemporalUIError)
	assert.Equal(t, c.TemporalUIURL, info.TemporalUIURL)
	status, session := call(http.MethodPost, "/auth/login/", map[string]string{"email": info.Admin.Email, "password": info.Admin.Password})
	require.Equal(t, http.StatusOK, status, "staff login: %v", session)
	staff := session["data"].(map[string]any)["access_token"].(string)
	status, reverified := callAs(staff, http.MethodPost, "/admin/transactions/"+id+"/reverify/", nil)
	require.Equal(t, http.StatusOK, status, "reverify: %v", reverified)
	data := reverified["data"].(map[string]any)
	workflowID, _ := data["workflow_id"].(string)
	assert.Equal(t, c.TemporalUIURL+"/namespaces/default/workflows/"+workflowID, data["workflow_url"])
	for _, u := range []string{data["workflow_url"].(string), c.TemporalUIURL + "/api/v1/namespaces/default/workflows/" + workflowID} {
		resp, err := http.Get(u)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, "GET %s: %.300s", u, body)
		if strings.Contains(u, "/api/") {
			assert.Contains(t, string(body), workflowID)
		}
	}

	// The UI decodes payloads through the console's codec server, with the browser's
	// credentials; the codec server answers the UI's origin (CORS) and wants a console session.
	resp, err := http.Get(c.TemporalUIURL + "/api/v1/settings")
	require.NoError(t, err)
	var settings struct {
		Codec struct {
			Endpoint           string
			IncludeCredentials bool
		}
	}
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&settings))
	resp.Body.Close()
	assert.Equal(t, c.BaseURL+"/console/codec", settings.Codec.Endpoint)
	assert.True(t, settings.Codec.IncludeCredentials)
	preflight, _ := http.NewRequest(http.MethodOptions, settings.Codec.Endpoint+"/decode", nil)
	preflight.Header.Set("Origin", c.TemporalUIURL)
	preflight.Header.Set("Access-Control-Request-Method", "POST")
	resp, err = http.DefaultClient.Do(preflight)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Equal(t, c.TemporalUIURL, resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "true", resp.Header.Get("Access-Control-Allow-Credentials"))
	decode, _ := http.NewRequest(http.MethodPost, settings.Codec.Endpoint+"/decode", strings.NewReader(`{"payloads":[]}`))
	decode.Header.Set("Origin", c.TemporalUIURL)
	resp, err = http.DefaultClient.Do(decode)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "no console session")

	// One API replica down: the one address sends every request to the other.
	require.NoError(t, c.KillReplica(devstack.KindAPI, 0))
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		for range 4 {
			status, _ := call(http.MethodGet, "/networks/", nil)
			assert.Equal(ct, http.StatusOK, status)
		}
	}, 10*time.Second, 100*time.Millisecond)
	require.NoError(t, c.StartReplica(t.Context(), devstack.KindAPI, 0))
	require.NoError(t, c.AwaitHealthy(t.Context(), time.Minute))
}
