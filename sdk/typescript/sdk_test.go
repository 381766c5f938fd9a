// Package typescript_test checks the TypeScript client in this directory: its generated types
// against the OpenAPI document of the api package, and the whole client (its Node tests, built
// with tsc and run with `node --test`, and its example) against the real service, started as
// `sika dev` on the test stack of internal/testenv.
package typescript_test

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

func TestMain(m *testing.M) {
	os.Exit(testenv.Run(m, nil))
}

// TestGeneratedTypesMatchTheDocument fails when api/openapi.yaml changed and the types were not
// regenerated: the generated files record the SHA-256 of the document they were made from. It
// needs neither Node nor the network; TestTypeScriptSDK regenerates them for real.
func TestGeneratedTypesMatchTheDocument(t *testing.T) {
	doc, err := api.OpenAPIJSON()
	require.NoError(t, err)
	sum := sha256.Sum256(doc)
	recorded, err := os.ReadFile(filepath.Join("src", "generated", "openapi.sha256"))
	require.NoError(t, err)
	require.Equal(t, strings.TrimSpace(string(recorded)), hex.EncodeToString(sum[:]),
		"the OpenAPI document changed since sdk/typescript/src/generated was made: run sdk/typescript/generate.sh and commit the result")
}

// devInfo is the part of `sika dev`'s dev.json the test reads.
type devInfo struct {
	BaseURL  string `json:"base_url"`
	Merchant struct {
		ID    string `json:"id"`
		Email string `json:"email"`
	} `json:"merchant"`
}

// TestTypeScriptSDK installs the client's npm packages (npm ci, from the lock file), checks that
// a fresh generation gives the committed types, starts the service as `sika dev` does, with the
// sandbox, and runs the client's Node tests and its example against it. What the Node tests need
// that no API call can make (a frozen wallet, a merchant with a tiny rate limit, an expired
// session token) is written to the database here first.
func TestTypeScriptSDK(t *testing.T) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed to test the TypeScript client (Node 18+): %v", tool, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	dir, err := os.Getwd()
	require.NoError(t, err)
	root := filepath.Join(dir, "..", "..")
	tmp := t.TempDir()

	run(t, ctx, dir, nil, "npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	run(t, ctx, dir, nil, "./generate.sh", "--check")

	bin := filepath.Join(tmp, "sika")
	run(t, ctx, root, nil, "go", "build", "-o", bin, "./cmd/sika")

	env := testenv.Current()
	temporal, err := env.TemporalAddress()
	require.NoError(t, err)
	jwtSecret := "sdk test jwt secret, at least 32 bytes long"
	stateDir := filepath.Join(tmp, "state")
	dev := exec.Command(bin, "dev")
	dev.Dir = tmp
	dev.Env = append(os.Environ(),
		"DATABASE_URL="+env.DatabaseURL, "TEMPORAL_ADDRESS="+temporal,
		"SIKA_TASK_QUEUE=sdk-ts-"+env.DatabaseName, "SIKA_STATE_DIR="+stateDir,
		"SIKA_HTTP_ADDR=127.0.0.1:0", "SIKA_LOG_LEVEL=warn", "SIKA_JWT_SECRET="+jwtSecret,
		// 250 payments and the rest in a minute; the merchant limit itself is tested on a
		// merchant of its own.
		"SIKA_RATE_LIMIT_PER_MINUTE=100000",
		// Collections are paced: a burst gets 503 service_unavailable with Retry-After, which
		// the client retries with the same Idempotency-Key.
		"SIKA_PAYMENT_ACCEPT_PER_SECOND=50",
		// 011 (paid after the push lifetime) expires soon enough to test outcome_unresolved.
		"SIKA_PUSH_LIFETIME=5s",
	)
	var devOut bytes.Buffer
	dev.Stdout, dev.Stderr = &devOut, &devOut
	devStarted := time.Now()
	require.NoError(t, dev.Start())
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
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
	}
	defer func() {
		stop()
		if t.Failed() {
			t.Logf("sika dev:\n%s", devOut.String())
		}
	}()

	devJSON := filepath.Join(stateDir, "dev.json")
	var info devInfo
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		b, err := os.ReadFile(devJSON)
		if !assert.NoError(c, err) || !assert.NoError(c, json.Unmarshal(b, &info)) {
			return
		}
		resp, err := http.Get(info.BaseURL + "/countries/")
		if assert.NoError(c, err) {
			resp.Body.Close()
			assert.Equal(c, 200, resp.StatusCode)
		}
	}, 2*time.Minute, 200*time.Millisecond, "sika dev did not come up:\n%s", &devOut)
	t.Logf("sika dev serves %s after %s", info.BaseURL, time.Since(devStarted).Round(time.Millisecond))

	fixtures := makeFixtures(t, ctx, env.DatabaseURL, jwtSecret)
	nodeEnv := append([]string{"SIKA_SDK_DEV_JSON=" + devJSON}, fixtures...)

	out := run(t, ctx, dir, nodeEnv, "npm", "test")
	t.Logf("node --test:\n%s", tail(out, 60))

	// The example: a merchant backend that sells an order through a checkout session, pays it
	// as the customer would in TEST, and marks it paid when the verified webhook comes.
	out = run(t, ctx, dir, nodeEnv, "node", "examples/merchant-backend.mjs", "--demo", "--dev-json", devJSON)
	t.Logf("examples/merchant-backend.mjs --demo:\n%s", out)
	assert.Contains(t, out, "paid")
}

// makeFixtures writes to the service's database what the Node tests cannot make through the
// API, and answers them as environment variables:
//   - SIKA_SDK_FROZEN_KEY: a TEST key of a merchant whose TEST BJ wallet is frozen (and whose
//     address 127.0.0.1 is whitelisted): a payout answers 422 wallet_frozen;
//   - SIKA_SDK_LIMITED_KEY: a TEST key of a merchant limited to 2 requests a minute;
//   - SIKA_SDK_EXPIRED_TOKEN: a dashboard token of the demo member, signed with the service's
//     secret, that expired a minute ago.
func makeFixtures(t *testing.T, ctx context.Context, databaseURL, jwtSecret string) []string {
	st, err := store.Open(ctx, databaseURL)
	require.NoError(t, err)
	defer st.Close()
	merchant := func(name string) (sika.Merchant, string) {
		_, m, err := st.RegisterMember(ctx, uuid.NewString()+"@sdk.example", "x", name, false, &store.NewMerchant{Name: name, Country: "BJ"})
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

// run runs a command in dir with the test's environment plus env, and fails the test with its
// output when it fails.
func run(t *testing.T, ctx context.Context, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 10 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	if err != nil {
		t.Fatalf("%s %s (in %s, %s): %v\n%s", name, strings.Join(args, " "), dir, time.Since(start).Round(time.Millisecond), err, out.String())
	}
	t.Logf("%s %s: %s", name, strings.Join(args, " "), time.Since(start).Round(time.Millisecond))
	return out.String()
}

// tail is the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("… (%d lines before)", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}
