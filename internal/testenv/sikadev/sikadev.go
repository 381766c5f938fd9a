// Package sikadev runs the service as `sika dev` does, on the test stack of internal/testenv
// (its database and Temporal), for the tests of the client libraries (sdk/typescript,
// sdk/go), which talk to it over HTTP as a merchant's backend would. It also writes to the
// database what no API call can make (Fixtures), and runs the clients' own test commands.
package sikadev

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/api"
	"github.com/sikahq/sika/internal/testenv"
	"github.com/sikahq/sika/store"
)

// Service is a running `sika dev`.
type Service struct {
	// DevJSON is the path of its dev.json (base URL, keys, logins): what the clients' tests
	// read, from SIKA_SDK_DEV_JSON.
	DevJSON string
	// BaseURL is the API's base URL (…/api/v1).
	BaseURL string
	// Started is when `sika dev` was started; Ready how long it took to answer.
	Started time.Time
	Ready   time.Duration
	// Env is SIKA_SDK_DEV_JSON and the fixtures (SIKA_SDK_*), for the clients' test commands.
	Env []string
}

// jwtSecret signs the dashboard sessions of the service, and the expired token of the fixtures.
const jwtSecret = "sdk test jwt secret, at least 32 bytes long"

// Start builds ./cmd/sika from root (the repository) and runs `sika dev` with the database and
// Temporal of testenv (on a task queue of its own, named after queue), until the test ends. It
// writes the fixtures (see Fixtures) once the service answers.
func Start(t *testing.T, ctx context.Context, root, queue string) *Service {
	t.Helper()
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "sika")
	Run(t, ctx, root, nil, "go", "build", "-o", bin, "./cmd/sika")

	env := testenv.Current()
	temporal, err := env.TemporalAddress()
	require.NoError(t, err)
	stateDir := filepath.Join(tmp, "state")
	dev := exec.Command(bin, "dev")
	dev.Dir = tmp
	dev.Env = append(os.Environ(),
		"DATABASE_URL="+env.DatabaseURL, "TEMPORAL_ADDRESS="+temporal,
		"SIKA_TASK_QUEUE="+queue+"-"+env.DatabaseName, "SIKA_STATE_DIR="+stateDir,
		"SIKA_HTTP_ADDR=127.0.0.1:0", "SIKA_LOG_LEVEL=warn", "SIKA_JWT_SECRET="+jwtSecret,
		// 250 payments and the rest in a minute; the merchant limit itself is tested on a
		// merchant of its own.
		"SIKA_RATE_LIMIT_PER_MINUTE=100000",
		// Collections are paced: a burst gets 503 service_unavailable with Retry-After, which
		// the clients retry with the same Idempotency-Key.
		"SIKA_PAYMENT_ACCEPT_PER_SECOND=50",
		// 011 (paid after the push lifetime) expires soon enough to test outcome_unresolved.
		"SIKA_PUSH_LIFETIME=5s",
	)
	var out bytes.Buffer
	dev.Stdout, dev.Stderr = &out, &out
	s := &Service{DevJSON: filepath.Join(stateDir, "dev.json"), Started: time.Now()}
	require.NoError(t, dev.Start())
	t.Cleanup(func() {
		_ = dev.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- dev.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = dev.Process.Kill()
			<-done
			t.Errorf("sika dev did not stop within 30 s")
		}
		if t.Failed() {
			t.Logf("sika dev:\n%s", out.String())
		}
	})

	var info struct {
		BaseURL string `json:"base_url"`
	}
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		b, err := os.ReadFile(s.DevJSON)
		if !assert.NoError(c, err) || !assert.NoError(c, json.Unmarshal(b, &info)) {
			return
		}
		resp, err := http.Get(info.BaseURL + "/countries/")
		if assert.NoError(c, err) {
			resp.Body.Close()
			assert.Equal(c, 200, resp.StatusCode)
		}
	}, 2*time.Minute, 200*time.Millisecond, "sika dev did not come up:\n%s", &out)
	s.BaseURL, s.Ready = info.BaseURL, time.Since(s.Started)
	t.Logf("sika dev serves %s after %s", s.BaseURL, s.Ready.Round(time.Millisecond))
	s.Env = append([]string{"SIKA_SDK_DEV_JSON=" + s.DevJSON}, Fixtures(t, ctx, env.DatabaseURL)...)
	return s
}

// Fixtures writes to the service's database what the clients' tests cannot make through the
// API, and answers them as environment variables:
//   - SIKA_SDK_FROZEN_KEY: a TEST key of a merchant whose TEST BJ wallet is frozen (and whose
//     address 127.0.0.1 is whitelisted): a payout answers 422 wallet_frozen;
//   - SIKA_SDK_LIMITED_KEY: a TEST key of a merchant limited to 2 requests a minute;
//   - SIKA_SDK_EXPIRED_TOKEN: a dashboard token of the demo member, signed with the service's
//     secret, that expired an hour ago.
func Fixtures(t *testing.T, ctx context.Context, databaseURL string) []string {
	t.Helper()
	st, err := store.Open(ctx, databaseURL)
	require.NoError(t, err)
	defer st.Close()
	merchant := func(name string) (sika.Merchant, string) {
		_, m, err := st.RegisterMember(ctx, uuid.NewString()+"@sdk.example", "x", name, "", &store.NewMerchant{Name: name, Country: "BJ"})
		require.NoError(t, err)
		key, err := st.CreateAPIKey(ctx, m.ID, sika.EnvironmentTest, sika.ScopeBoth, "sdk test", nil)
		require.NoError(t, err)
		return *m, key.Secret
	}
	frozen, frozenKey := merchant("SDK frozen wallet")
	_, err = st.AddIPWhitelistEntry(ctx, frozen.ID, sika.EnvironmentTest, netip.MustParsePrefix("127.0.0.1/32"), "sdk test")
	require.NoError(t, err)
	_, err = st.Pool().Exec(ctx, `INSERT INTO wallets (merchant_id, environment, country, currency, is_frozen)
		VALUES ($1, 'TEST', 'BJ', 'XOF', true)`, frozen.ID)
	require.NoError(t, err)

	limited, limitedKey := merchant("SDK rate limited")
	perMinute := 2
	require.NoError(t, st.SetMerchantRateLimit(ctx, limited.ID, &perMinute))

	member, _, err := st.MemberByEmail(ctx, "merchant@sika.local")
	require.NoError(t, err)
	past := time.Now().Add(-2 * time.Hour)
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Issuer: "sika", Subject: member.ID.String(), ID: uuid.NewString(),
		IssuedAt: jwt.NewNumericDate(past), ExpiresAt: jwt.NewNumericDate(past.Add(time.Hour)),
	}).SignedString([]byte(jwtSecret))
	require.NoError(t, err)
	return []string{"SIKA_SDK_FROZEN_KEY=" + frozenKey, "SIKA_SDK_LIMITED_KEY=" + limitedKey, "SIKA_SDK_EXPIRED_TOKEN=" + token}
}

// Run runs a command in dir with the test's environment plus env, and fails the test with its
// output when it fails; it answers the output.
func Run(t *testing.T, ctx context.Context, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s (in %s, %s): %v\n%s", name, strings.Join(args, " "), dir, time.Since(start).Round(time.Millisecond), err, out.String())
	}
	t.Logf("%s %s: %s", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return out.String()
}

// Tail is the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("… (%d lines before)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// RequireDocumentSum fails the test when sumFile (the SHA-256 a client generator recorded of
// the OpenAPI document it read) is not that of the document the api package serves now: the
// document changed and the client was not regenerated (run regenerate, then commit).
func RequireDocumentSum(t *testing.T, sumFile, regenerate string) {
	t.Helper()
	doc, err := api.OpenAPIJSON()
	require.NoError(t, err)
	sum := sha256.Sum256(doc)
	recorded, err := os.ReadFile(sumFile)
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(string(recorded)), hex.EncodeToString(sum[:]),
		"the OpenAPI document changed since %s was written: run %s and commit the result", sumFile, regenerate)
}
