package sika

// What the tests against the service share. The service is the one `sika dev` runs: its
// dev.json (base URL, keys, logins) is named by SIKA_SDK_DEV_JSON, which the main module's
// sdk/go_client_test.go sets after starting it, with the fixtures it wrote to the database
// (SIKA_SDK_*). Without it these tests are skipped: `make test` runs them (through
// `go test ./sdk/`), or point SIKA_SDK_DEV_JSON at the dev.json of a `make run`.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// devInfo is `sika dev`'s dev.json.
type devInfo struct {
	BaseURL string `json:"base_url"`
	Admin   struct {
		Email    string `json:"email"`
		Password string `json:"password"`
	} `json:"admin"`
	Merchant struct {
		ID       string `json:"id"`
		Email    string `json:"email"`
		Password string `json:"password"`
		APIKeys  struct {
			TestBoth   string `json:"test_both"`
			TestPayin  string `json:"test_payin"`
			TestPayout string `json:"test_payout"`
			LiveBoth   string `json:"live_both"`
		} `json:"api_keys"`
	} `json:"merchant"`
}

// service answers the running service's dev.json, or skips the test without one.
func service(t *testing.T) *devInfo {
	t.Helper()
	path := os.Getenv("SIKA_SDK_DEV_JSON")
	if path == "" {
		t.Skip("SIKA_SDK_DEV_JSON is not set: the service's tests run from the main module's sdk/go_client_test.go (make test)")
	}
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var dev devInfo
	require.NoError(t, json.Unmarshal(b, &dev))
	return &dev
}

// fixture answers one of the SIKA_SDK_* values the main module's test wrote.
func fixture(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv("SIKA_SDK_" + name)
	require.NotEmpty(t, v, "SIKA_SDK_%s is not set (sdk/go_client_test.go writes it)", name)
	return v
}

// client answers a client of the service with the demo merchant's TEST key of every scope,
// unless o says otherwise.
func client(t *testing.T, dev *devInfo, o Options) *Client {
	t.Helper()
	if o.BaseURL == "" {
		o.BaseURL = dev.BaseURL
	}
	if o.APIKey == "" {
		o.APIKey = dev.Merchant.APIKeys.TestBoth
	}
	if o.InitialRetryDelay == 0 {
		o.InitialRetryDelay = 100 * time.Millisecond
	}
	c, err := New(o)
	require.NoError(t, err)
	return c
}

// dashboard logs in and answers a client of the member's session, in TEST.
func dashboard(t *testing.T, ctx context.Context, dev *devInfo, email, password string, o Options) *Client {
	t.Helper()
	anonymous, err := New(Options{BaseURL: dev.BaseURL})
	require.NoError(t, err)
	session, err := anonymous.LoginWithResponse(ctx, LoginJSONRequestBody{Email: Email(email), Password: password})
	require.NoError(t, err)
	o.APIKey, o.Environment = session.JSON200.Data.AccessToken, EnvironmentTEST
	return client(t, dev, o)
}

// final polls the transaction until it left PENDING (within two minutes: the worker may have a
// queue on a busy machine).
func final(t *testing.T, ctx context.Context, c *Client, id UUID) TransactionDetail {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := c.GetTransactionWithResponse(ctx, id, nil)
		require.NoError(t, err)
		if tx := resp.JSON200.Data; tx.Status != TransactionStatusPENDING {
			return tx
		}
		require.True(t, time.Now().Before(deadline), "transaction %s still PENDING after 2 minutes", id)
		time.Sleep(200 * time.Millisecond)
	}
}

// phone answers a Benin MTN number of the sandbox ending in suffix (its last three digits
// decide the outcome).
func phone(suffix string) string {
	// A 10-digit Benin number: 100,000 of them per suffix. With 8 digits (1,000 per suffix) two
	// of a run's payments shared a number now and then, and a test that finds its payment by
	// searching the number found two.
	return fmt.Sprintf("01%05d%s", rand.IntN(100000), suffix)
}

// softpayBody is a 1000 XOF collection from a sandbox number ending in suffix.
func softpayBody(suffix string) SoftpayJSONRequestBody {
	return SoftpayJSONRequestBody{
		Amount: "1000", Currency: "XOF", Country: "BJ", Network: "MTN_BJ",
		CustomerPhone: phone(suffix), CustomerName: "Koffi Mensah",
	}
}

// asError answers err as an *Error, failing the test otherwise.
func asError(t *testing.T, err error) *Error {
	t.Helper()
	var e *Error
	require.True(t, errors.As(err, &e), "want an *sika.Error, got %v", err)
	return e
}

func ptr[T any](v T) *T { return &v }
