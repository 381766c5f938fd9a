package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/internal/metricstest"
	"github.com/sikahq/sika/telemetry"
	"github.com/sikahq/sika/webhook"
)

// dashboardPath is the Grafana dashboard that docker-compose provisions.
const dashboardPath = "../../deploy/grafana/sika.json"

// TestMetricsOfAPIAndWorkerCoverTheDashboard runs the API and the worker as `sika api` and
// `sika worker` do (each its own Temporal client and registry, the worker's served by its
// metrics listener), makes a sandbox payment with a webhook endpoint and an idempotency
// conflict, then scrapes both: the worker serves the Temporal SDK's metrics and the database
// state, and every metric the dashboard queries is exported by one of them.
func TestMetricsOfAPIAndWorkerCoverTheDashboard(t *testing.T) {
	ctx := t.Context()
	// The endpoint refuses each event's first delivery (made straight from the outbox), so that
	// the retry runs as a workflow activity and its metrics exist too.
	var delivered atomic.Int32
	var mu sync.Mutex
	seen := map[string]bool{}
	hooks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		again := seen[r.Header.Get(webhook.HeaderID)]
		seen[r.Header.Get(webhook.HeaderID)] = true
		mu.Unlock()
		if !again {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		delivered.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hooks.Close()
	pe := newProcessEnv(t, "metrics", 100*time.Millisecond, map[string]string{"SIKA_WEBHOOK_ALLOW_PRIVATE": "true"})
	cfg, st, logger := pe.cfg, pe.st, slog.New(slog.DiscardHandler)

	apiReg := prometheus.NewRegistry()
	apiTemporal, err := dialTemporal(ctx, cfg, logger, apiReg)
	require.NoError(t, err)
	defer apiTemporal.Close()
	workerReg := prometheus.NewRegistry()
	require.NoError(t, telemetry.Register(workerReg))
	workerTemporal, err := dialTemporal(ctx, cfg, logger, workerReg)
	require.NoError(t, err)
	defer workerTemporal.Close()
	metricsLn, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)

	run, stop := context.WithCancel(context.Background())
	done := make(chan error, 3)
	go func() { done <- serveAPI(run, cfg, st, apiTemporal, apiReg, pe.ln, logger) }()
	go func() { done <- runWorker(run, cfg, st, workerTemporal, workerReg, logger) }()
	go func() { done <- serveMetrics(run, metricsLn, workerReg, logger) }()
	defer func() {
		stop()
		for range 3 {
			<-done
		}
	}()

	merchant, key := pe.merchantKey(t, "Metrics")
	_, err = st.CreateWebhookEndpoint(ctx, sika.WebhookEndpoint{Merchant: merchant.ID, Environment: sika.EnvironmentTest,
		URL: hooks.URL + "/hooks", IsActive: true}, "whsec_"+strings.Repeat("a", 32))
	require.NoError(t, err)
	softpay := func(idemKey, amount string) (int, map[string]any) {
		return pe.post(t, key, idemKey, "/api/v1/payments/softpay/", map[string]string{"amount": amount, "currency": "XOF",
			"country": "BJ", "network": "MTN_BJ", "customer_phone": "0197000123", "customer_name": "Metrics"})
	}
	idem := uuid.NewString()
	code, out := softpay(idem, "1000")
	require.Equal(t, http.StatusCreated, code, out)
	id := uuid.MustParse(out["data"].(map[string]any)["id"].(string))
	code, out = softpay(idem, "2000")
	require.Equal(t, http.StatusConflict, code, out)
	require.Eventually(t, func() bool {
		tx, err := st.Transaction(ctx, id)
		return err == nil && tx.Status == sika.StatusSuccess
	}, 30*time.Second, 100*time.Millisecond, "the payment never succeeded")
	require.Eventually(t, func() bool { return delivered.Load() >= 2 }, 30*time.Second, 100*time.Millisecond,
		"transaction.pending and transaction.succeeded were not delivered on their retry")

	apiNames := metricstest.Scrape(t, pe.vars["SIKA_PUBLIC_URL"]+"/metrics")
	workerNames := metricstest.Scrape(t, "http://"+metricsLn.Addr().String()+"/metrics")
	for _, name := range []string{"temporal_request_total", "temporal_workflow_completed_total", "temporal_activity_execution_latency_seconds_count",
		"temporal_local_activity_execution_latency_seconds_count", "sika_webhook_delivery_lag_seconds_count",
		"temporal_workflow_task_execution_latency_seconds_bucket", "sika_outbox_depth", "sika_wallet_holds", "sika_wallet_held_amount",
		"sika_state_up", "sika_gateway_call_duration_seconds_count", "sika_payments_completed_total"} {
		assert.NotNil(t, workerNames[name], "the worker's /metrics serves %s", name)
	}
	assert.NotNil(t, apiNames["sika_http_requests_total"])
	assert.NotNil(t, apiNames["temporal_request_total"], "the API's Temporal client reports too")

	raw, err := os.ReadFile(dashboardPath)
	require.NoError(t, err)
	var dashboard any
	require.NoError(t, json.Unmarshal(raw, &dashboard))
	queries := dashboardQueries(dashboard)
	require.NotEmpty(t, queries)
	var missing []string
	for _, q := range queries {
		labels := map[string]bool{}
		for _, name := range q.metrics {
			if apiNames[name] == nil && workerNames[name] == nil {
				missing = append(missing, name)
			}
			for l := range apiNames.LabelNames(name) {
				labels[l] = true
			}
			for l := range workerNames.LabelNames(name) {
				labels[l] = true
			}
		}
		for _, l := range q.labels {
			if !labels[l] {
				missing = append(missing, q.expr+": label "+l)
			}
		}
	}
	sort.Strings(missing)
	assert.Empty(t, missing, "metrics or labels the dashboard queries that neither the API nor the worker exports")
}

// metricName finds the metric names in a PromQL expression (every series of Sika and of the
// Temporal SDK is prefixed); byLabels the labels it groups by.
var (
	metricName = regexp.MustCompile(`\b(?:sika|temporal)_[a-z0-9_]+`)
	byLabels   = regexp.MustCompile(`by \(([^)]*)\)`)
)

// dashboardQuery is one "expr" of the dashboard: its metrics and the labels it groups by
// (but le, which is the histograms').
type dashboardQuery struct {
	expr    string
	metrics []string
	labels  []string
}

// dashboardQueries collects every "expr" of a Grafana dashboard.
func dashboardQueries(v any) []dashboardQuery {
	var out []dashboardQuery
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "expr" {
					q := dashboardQuery{expr: s, metrics: metricName.FindAllString(s, -1)}
					for _, m := range byLabels.FindAllStringSubmatch(s, -1) {
						for _, l := range strings.Split(m[1], ",") {
							if l = strings.TrimSpace(l); l != "le" {
								q.labels = append(q.labels, l)
							}
						}
					}
					out = append(out, q)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(v)
	return out
}
