package wave

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/gatewaytest"
	"github.com/sikahq/sika/gateway/wave/wavefake"
)

// TestFakeAsTheLiveEndToEndDrivesIt plays the flow the service's LIVE end-to-end test runs
// against wavefake with its defaults: the merchant gets the launch URL, the test pays it as the
// customer and delivers Wave's signed webhook to the service; payouts succeed at a later read.
func TestFakeAsTheLiveEndToEndDrivesIt(t *testing.T) {
	f := wavefake.New(t)
	c := newClient(t, f, nil)
	received := make(chan gateway.Callback, 4)
	service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		cb, err := c.ParseCallback(r.Context(), r.Header, body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		received <- cb
	}))
	defer service.Close()

	paid := gatewaytest.Reference()
	res, err := c.Collect(t.Context(), collectReq(paid))
	require.NoError(t, err)
	require.Equal(t, gateway.NextRedirect, res.NextAction.Type)
	st, err := c.CollectionStatus(t.Context(), paid)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusPending, st.Status, "nobody pays until the test says so")
	f.Pay(res.NextAction.URL)
	require.NoError(t, f.SendWebhook(service.URL+"/gateway-callbacks/wave/", res.NextAction.URL))
	require.Len(t, received, 1)
	assert.Equal(t, gateway.Callback{Kind: gateway.CallbackCollection, Trusted: true, OperationStatus: gateway.OperationStatus{
		Reference: paid, GatewayReference: res.GatewayReference, Status: gateway.StatusSuccess}}, <-received)

	failed := gatewaytest.Reference()
	res, err = c.Collect(t.Context(), collectReq(failed))
	require.NoError(t, err)
	f.FailPayment(res.GatewayReference, "insufficient-funds")
	require.NoError(t, f.SendWebhook(service.URL, res.GatewayReference))
	require.Len(t, received, 1)
	cb := <-received
	assert.Equal(t, gateway.StatusFailed, cb.Status)
	assert.Equal(t, gateway.FailureInsufficientFunds, cb.FailureCode)

	// a webhook the service refuses is an error of SendWebhook
	wrong := newClient(t, f, func(cfg *Config) { cfg.WebhookSecret = "another secret" })
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if _, err := wrong.ParseCallback(r.Context(), r.Header, body); err != nil {
			http.Error(w, "refused", http.StatusUnauthorized)
		}
	}))
	defer refusing.Close()
	assert.ErrorContains(t, f.SendWebhook(refusing.URL, res.NextAction.URL), "401")

	out := gatewaytest.Reference()
	pt, err := c.Disburse(t.Context(), payoutReq(out))
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusPending, pt.Status, "processing when created")
	pt, err = c.DisbursementStatus(t.Context(), out)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusSuccess, pt.Status, "succeeded at a later read")
}
