package sandbox

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
)

// A cancel withdraws a pending collection (FAILED cancelled, with its callback, and nothing
// after it); it leaves a final one as it stands and refuses a 011 one.
func TestCancelCollection(t *testing.T) {
	t.Parallel()
	h := newHarness(t, longTTL)
	cases := []struct {
		name    string
		suffix  string
		network string
		otp     string
		settled gateway.Status // wait for this state before cancelling ("" cancels at once)
		// The answer to the cancel, its failure code, and the callbacks the collection sends.
		want      gateway.Status
		code      string
		callbacks []gateway.Status
	}{
		{name: "pending is cancelled", suffix: "009", want: gateway.StatusFailed, code: gateway.FailureCancelled,
			callbacks: []gateway.Status{gateway.StatusFailed}},
		{name: "never approved is cancelled", suffix: "004", want: gateway.StatusFailed, code: gateway.FailureCancelled,
			callbacks: []gateway.Status{gateway.StatusFailed}},
		{name: "awaiting its otp is cancelled", suffix: "000", network: "MOOV_TG", want: gateway.StatusFailed,
			code: gateway.FailureCancelled, callbacks: []gateway.Status{gateway.StatusFailed}},
		{name: "success stays success", suffix: "000", settled: gateway.StatusSuccess, want: gateway.StatusSuccess,
			callbacks: []gateway.Status{gateway.StatusSuccess}},
		{name: "declined stays declined", suffix: "001", settled: gateway.StatusFailed, want: gateway.StatusFailed,
			code: gateway.FailurePayerDeclined, callbacks: []gateway.Status{gateway.StatusFailed}},
		{name: "011 is refused", suffix: "011", want: gateway.StatusPending},
		{name: "011 awaiting its otp is cancelled", suffix: "011", network: "MOOV_TG", want: gateway.StatusFailed,
			code: gateway.FailureCancelled, callbacks: []gateway.Status{gateway.StatusFailed}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			network := tc.network
			if network == "" {
				network = "MTN_BJ"
			}
			ref := newRef()
			started, err := h.collect(GatewayA, ref, network, phone(tc.suffix), tc.otp)
			require.NoError(t, err)
			c := h.clients[GatewayA]
			if tc.settled != "" {
				require.EventuallyWithT(t, func(ct *assert.CollectT) {
					got, err := c.CollectionStatus(context.Background(), ref)
					require.NoError(ct, err)
					assert.Equal(ct, tc.settled, got.Status)
				}, patience, tick/2)
			}

			got, err := c.CancelCollection(context.Background(), ref)
			require.NoError(t, err)
			require.Equal(t, tc.want, got.Status)
			require.Equal(t, tc.code, got.FailureCode)
			require.Equal(t, ref, got.Reference)
			require.Equal(t, started.GatewayReference, got.GatewayReference)

			again, err := c.CancelCollection(context.Background(), ref)
			require.NoError(t, err)
			require.Equal(t, got, again, "a second cancel changes nothing")
			h.receiver.requireCallbacks(t, ref, tc.callbacks...)
			for _, cb := range h.receiver.callbacks(ref) {
				assert.Equal(t, tc.code, cb.FailureCode)
			}
			// A cancelled 009 would have succeeded after 20 ticks: its timers are stopped.
			if tc.code == gateway.FailureCancelled {
				require.Never(t, func() bool {
					read, err := c.CollectionStatus(context.Background(), ref)
					return err != nil || read.Status != gateway.StatusFailed || read.FailureCode != gateway.FailureCancelled
				}, 25*tick, tick, "a cancelled collection changed")
			}
			h.requireOneOperation(t, ref, 1, len(tc.callbacks))
		})
	}
}

func TestCancelUnknownReference(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	got, err := h.clients[GatewayA].CancelCollection(context.Background(), newRef())
	require.NoError(t, err)
	require.Equal(t, gateway.StatusNotFound, got.Status)

	// A collection is cancelled at the gateway that holds it only.
	ref := newRef()
	_, err = h.collect(GatewayB, ref, "MTN_BJ", phone("004"), "")
	require.NoError(t, err)
	got, err = h.clients[GatewayA].CancelCollection(context.Background(), ref)
	require.NoError(t, err)
	require.Equal(t, gateway.StatusNotFound, got.Status)
	read, err := h.clients[GatewayB].CollectionStatus(context.Background(), ref)
	require.NoError(t, err)
	require.Equal(t, gateway.StatusPending, read.Status)
}

// The cancel route is authenticated like the others and exists for collections only.
func TestCancelRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t, longTTL)
	ref := newRef()
	_, err := h.collect(GatewayA, ref, "MTN_BJ", phone("004"), "")
	require.NoError(t, err)
	_, err = h.disburse(GatewayA, ref, "MTN_BJ", phone("004"))
	require.NoError(t, err)
	gw := DefaultGateways(testMaster)[0]
	cancel := func(path, key string) (int, string) {
		req, err := http.NewRequest(http.MethodPost, h.url+path, http.NoBody)
		require.NoError(t, err)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := h.http.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		var body errorBody
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body.Error.Code
	}
	collection := "/gw/" + gw.Name + "/v1/collections/" + url.PathEscape(ref) + "/cancel"

	status, code := cancel(collection, "")
	require.Equal(t, http.StatusUnauthorized, status)
	require.Equal(t, "unauthorized", code)
	status, _ = cancel(collection, DefaultGateways(testMaster)[1].APIKey)
	require.Equal(t, http.StatusUnauthorized, status, "another gateway's key")
	status, code = cancel("/gw/nowhere/v1/collections/"+ref+"/cancel", gw.APIKey)
	require.Equal(t, http.StatusNotFound, status)
	require.Equal(t, "unknown_gateway", code)
	status, _ = cancel("/gw/"+gw.Name+"/v1/disbursements/"+ref+"/cancel", gw.APIKey)
	require.Equal(t, http.StatusNotFound, status, "payouts have no cancel")
	for _, v := range h.server.Operations() {
		require.Equal(t, gateway.StatusPending, v.Status, "a refused cancel changed %s", v.Kind)
	}

	status, _ = cancel(collection, gw.APIKey)
	require.Equal(t, http.StatusOK, status)
	for _, v := range h.server.Operations() {
		want := map[gateway.CallbackKind]gateway.Status{
			kindCollection: gateway.StatusFailed, kindDisbursement: gateway.StatusPending}[v.Kind]
		require.Equal(t, want, v.Status, v.Kind)
	}
}

// The client's cancel is a gateway call like the others: a sandbox that is down is
// Unavailable (nothing was cancelled).
func TestCancelErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.server.Close()
	_, err := h.clients[GatewayA].CancelCollection(context.Background(), newRef())
	requireKind(t, err, gateway.KindUnavailable, "")

	gw := DefaultGateways(testMaster)[0]
	refused := NewClient(ClientConfig{Name: gw.Name, BaseURL: "http://127.0.0.1:1", APIKey: gw.APIKey, Timeout: time.Second})
	_, err = refused.CancelCollection(context.Background(), newRef())
	requireKind(t, err, gateway.KindUnavailable, "")
}
