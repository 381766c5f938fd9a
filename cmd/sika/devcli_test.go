package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/webhook"
)

// syncBuffer is a command's output, read by the test while the command writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// devCLIStack is `sika api` and `sika worker` on the real Postgres and Temporal dev server,
// with the sandbox operator, for the developer commands to talk to.
type devCLIStack struct {
	*processEnv
	base string
}

func newDevCLIStack(t *testing.T) *devCLIStack {
	t.Helper()
	pe := newProcessEnv(t, "devcli", 50*time.Millisecond, nil)
	logger := slog.New(slog.DiscardHandler)
	tc, err := dialTemporal(t.Context(), pe.cfg, logger, nil)
	require.NoError(t, err)
	run, stop := context.WithCancel(context.Background())
	done := make(chan error, 2)
	go func() { done <- serveAPI(run, pe.cfg, pe.st, tc, nil, pe.ln, logger) }()
	go func() { done <- runWorker(run, pe.cfg, pe.st, tc, nil, logger) }()
	t.Cleanup(func() {
		stop()
		for range 2 {
			<-done
		}
		tc.Close()
	})
	return &devCLIStack{processEnv: pe, base: pe.vars["SIKA_PUBLIC_URL"] + "/api/v1"}
}

// command runs a developer command in the background with the key; stop ends it and returns
// its error.
func (s *devCLIStack) command(t *testing.T, cmd func(context.Context, []string, func(string) string, io.Writer) error, key string, args ...string) (*syncBuffer, func() error) {
	t.Helper()
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	getenv := func(k string) string {
		return map[string]string{"SIKA_API_KEY": key, "SIKA_BASE_URL": s.base}[k]
	}
	go func() { done <- cmd(ctx, args, getenv, out) }()
	var once sync.Once
	var err error
	stop := func() error {
		once.Do(func() {
			cancel()
			err = <-done
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return out, stop
}

// waitOutput waits until the command's output holds want.
func waitOutput(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(out.String(), want) }, 30*time.Second, 20*time.Millisecond,
		"output never showed %q:\n%s", want, out)
}

// pay makes a sandbox softpay and waits for its final status.
func (s *devCLIStack) pay(t *testing.T, key, number string, headers ...string) uuid.UUID {
	t.Helper()
	c := &devClient{baseURL: s.base, key: key, http: http.DefaultClient}
	var tx struct {
		ID uuid.UUID `json:"id"`
	}
	require.NoError(t, c.call(t.Context(), "POST", "/payments/softpay/", map[string]string{"amount": "1000", "currency": "XOF", "country": "BJ",
		"network": "MTN_BJ", "customer_phone": number, "customer_name": "Listen"}, uuid.NewString(), &tx))
	require.Eventually(t, func() bool {
		got, err := s.st.Transaction(t.Context(), tx.ID)
		return err == nil && got.Status.Final()
	}, 30*time.Second, 50*time.Millisecond, "the payment never ended")
	return tx.ID
}

// eventsOf returns the ids of the merchant's events, oldest first.
func (s *devCLIStack) eventsOf(t *testing.T, merchant uuid.UUID, where string, args ...any) []string {
	t.Helper()
	rows, err := s.st.Pool().Query(t.Context(), `SELECT event_id FROM events WHERE merchant_id = $1 `+where+` ORDER BY id`, append([]any{merchant}, args...)...)
	require.NoError(t, err)
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		require.NoError(t, rows.Scan(&id))
		ids = append(ids, id)
	}
	return ids
}

// TestDeveloperCLI runs sika listen, sika trigger and sika logs tail against the API and
// worker on the real Postgres and Temporal dev server.
func TestDeveloperCLI(t *testing.T) {
	s := newDevCLIStack(t)
	merchantA, keyA := s.merchantKey(t, "Listener")
	_, keyB := s.merchantKey(t, "Other")

	t.Run("listen forwards the merchant's events signed, and no one else's", func(t *testing.T) {
		type delivery struct {
			header http.Header
			body   []byte
		}
		var mu sync.Mutex
		var got []delivery
		local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, delivery{r.Header.Clone(), body})
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		}))
		defer local.Close()
		out, stop := s.command(t, runListen, keyA, "--forward-to", local.URL+"/webhooks")
		waitOutput(t, out, "Connected")
		secret := regexp.MustCompile(`whsec_[A-Za-z0-9+/=]+`).FindString(out.String())
		require.NotEmpty(t, secret, "the session's secret is printed: %s", out)

		// The other merchant's payment commits first: had it leaked, it would arrive before ours.
		other := s.pay(t, keyB, "0197000123")
		mine := s.pay(t, keyA, "0197000123")
		succeeded := s.eventsOf(t, merchantA.ID, `AND transaction_id = $2 AND type = 'transaction.succeeded'`, mine)
		require.Len(t, succeeded, 1)
		waitOutput(t, out, succeeded[0]+"  -> 204")
		require.NoError(t, stop())

		mu.Lock()
		defer mu.Unlock()
		var ids []string
		for _, d := range got {
			assert.NoError(t, webhook.Verify(secret, d.header, d.body, 5*time.Minute), "a forwarded delivery verifies with the session's secret")
			assert.NotContains(t, string(d.body), other.String(), "another merchant's event was forwarded")
			ids = append(ids, d.header.Get(webhook.HeaderID))
		}
		assert.Equal(t, s.eventsOf(t, merchantA.ID, `AND transaction_id = $2`, mine), ids, "transaction.pending then .succeeded, each once")
		assert.Contains(t, out.String(), "transaction.succeeded")
	})

	t.Run("a stream resumed after a drop has no gap and no duplicate", func(t *testing.T) {
		before := s.eventsOf(t, merchantA.ID, "")
		require.NotEmpty(t, before)
		last := before[len(before)-1]
		c := &devClient{baseURL: s.base, key: keyA, http: http.DefaultClient}
		errDrop := errors.New("drop")
		var seen []string
		for range 2 {
			s.pay(t, keyA, "0197000123")
		}
		// The stream is dropped as its second event comes, before it is handled; two more
		// payments happen meanwhile.
		resumeAt, _, err := c.stream(t.Context(), "/events/stream/", last, func() {}, func(m sseMessage) error {
			if len(seen) == 1 {
				return errDrop
			}
			seen = append(seen, m.ID)
			return nil
		})
		require.ErrorIs(t, err, errDrop)
		s.pay(t, keyA, "0197000123")
		s.pay(t, keyA, "0197000001")
		want := s.eventsOf(t, merchantA.ID, "")[len(before):]
		require.Len(t, want, 8)
		_, _, err = c.stream(t.Context(), "/events/stream/", resumeAt, func() {}, func(m sseMessage) error {
			if seen = append(seen, m.ID); len(seen) == len(want) {
				return errDrop
			}
			return nil
		})
		require.ErrorIs(t, err, errDrop)
		assert.Equal(t, want, seen, "every event once, in commit order")

		// Another merchant cannot resume from this merchant's event.
		other := &devClient{baseURL: s.base, key: keyB, http: http.DefaultClient}
		_, _, err = other.stream(t.Context(), "/events/stream/", last, func() {}, func(sseMessage) error { return nil })
		var apiErr *apiError
		require.ErrorAs(t, err, &apiErr)
		assert.Equal(t, http.StatusBadRequest, apiErr.Status)
		assert.Contains(t, apiErr.Message, "Last-Event-ID")
	})

	t.Run("trigger produces each event for real", func(t *testing.T) {
		merchant, key := s.merchantKey(t, "Trigger")
		_, err := s.st.AddIPWhitelistEntry(t.Context(), merchant.ID, sika.EnvironmentTest, netip.MustParsePrefix("127.0.0.1/32"), "tests")
		require.NoError(t, err)
		getenv := func(k string) string {
			return map[string]string{"SIKA_API_KEY": key, "SIKA_BASE_URL": s.base}[k]
		}
		triggered := regexp.MustCompile(`Triggered (\S+): (evt_\S+)`)
		cases := map[string]sika.EventType{"checkout.expired": sika.EventCheckoutSessionExpired, "payment.succeeded": sika.EventTransactionSucceeded,
			"transaction.failed": sika.EventTransactionFailed, "payout.succeeded": sika.EventPayoutSucceeded}
		var wg sync.WaitGroup
		for name, typ := range cases {
			wg.Go(func() {
				var out bytes.Buffer
				args := []string{name}
				if typ == sika.EventCheckoutSessionExpired {
					args = append(args, "--expires-in", "11s")
				}
				if !assert.NoError(t, runTrigger(t.Context(), args, getenv, &out), "trigger %s: %s", name, &out) {
					return
				}
				m := triggered.FindStringSubmatch(out.String())
				if assert.NotNil(t, m, "trigger %s printed its event: %s", name, &out) {
					assert.Equal(t, string(typ), m[1])
					assert.Len(t, s.eventsOf(t, merchant.ID, `AND event_id = $2 AND type = $3 AND environment = 'TEST'`, m[2], typ), 1,
						"the event of %s is in the merchant's event log", name)
				}
			})
		}
		wg.Wait()

		live, err := s.st.CreateAPIKey(t.Context(), merchant.ID, sika.EnvironmentLive, sika.ScopeBoth, "live", nil)
		require.NoError(t, err)
		err = runTrigger(t.Context(), []string{"payment.succeeded"}, func(k string) string {
			return map[string]string{"SIKA_API_KEY": live.Secret, "SIKA_BASE_URL": s.base}[k]
		}, io.Discard)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "TEST key")
		assert.Empty(t, s.eventsOf(t, merchant.ID, `AND environment = 'LIVE'`), "a LIVE key triggers nothing")
	})

	t.Run("logs tail shows the merchant's requests and no one else's", func(t *testing.T) {
		out, stop := s.command(t, runLogs, keyA, "tail")
		waitOutput(t, out, "Connected")
		get := func(key, idem, requestID string) {
			req, err := http.NewRequest("GET", s.base+"/merchant-balances/?page_size=5&secret=x", nil)
			require.NoError(t, err)
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Idempotency-Key", idem)
			req.Header.Set("X-Request-Id", requestID)
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
		}
		otherIdem, otherRequest := "other-"+uuid.NewString(), "other-req-"+uuid.NewString()
		get(keyB, otherIdem, otherRequest)
		idem, requestID := "logs-"+uuid.NewString(), "req-"+uuid.NewString()
		get(keyA, idem, requestID)
		waitOutput(t, out, "request-id="+requestID)
		require.NoError(t, stop())
		line := ""
		for l := range strings.Lines(out.String()) {
			if strings.Contains(l, requestID) {
				line = l
			}
		}
		assert.Contains(t, line, "GET")
		assert.Contains(t, line, "/api/v1/merchant-balances/")
		assert.Contains(t, line, "200")
		assert.Contains(t, line, "idempotency-key="+idem)
		assert.NotContains(t, line, "secret=x", "no query string is recorded")
		assert.NotContains(t, out.String(), otherIdem)
		assert.NotContains(t, out.String(), otherRequest)
	})
}

// -h prints every flag's default: the API key from SIKA_API_KEY is not one of them. Without
// --base-url or SIKA_BASE_URL the commands go where the running `sika dev` says it serves.
func TestDevFlagsKeepTheKeyOutOfHelpAndFindTheDevServer(t *testing.T) {
	state := t.TempDir()
	env := map[string]string{"SIKA_API_KEY": "sk_test_secretsecret", "SIKA_STATE_DIR": state}
	getenv := func(k string) string { return env[k] }
	fs := flag.NewFlagSet("listen", flag.ContinueOnError)
	client := devFlags(fs, getenv)
	var help bytes.Buffer
	assert.ErrorIs(t, parseDevFlags(fs, []string{"-h"}, &help), flag.ErrHelp)
	assert.Contains(t, help.String(), "api-key")
	assert.NotContains(t, help.String(), "secretsecret")

	c, err := client()
	require.NoError(t, err)
	assert.Equal(t, "sk_test_secretsecret", c.key)
	assert.Equal(t, defaultBaseURL, c.baseURL, "no dev.json: the default")
	require.NoError(t, os.WriteFile(filepath.Join(state, "dev.json"), []byte(`{"base_url": "http://127.0.0.1:8081/api/v1"}`), 0o600))
	c, err = client()
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:8081/api/v1", c.baseURL, "the port sika dev moved to")
	env["SIKA_BASE_URL"] = "http://127.0.0.1:9000/api/v1/"
	c, err = client()
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:9000/api/v1", c.baseURL, "the environment first")
}
