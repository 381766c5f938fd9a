package sandbox

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
)

// getPage fetches a checkout page and returns its status and HTML.
func (h *harness) getPage(t *testing.T, pageURL string) (int, string) {
	t.Helper()
	resp, err := h.http.Get(pageURL)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	return resp.StatusCode, html.UnescapeString(string(raw))
}

func TestRedirectCheckout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, longTTL)

	t.Run("page", func(t *testing.T) {
		t.Parallel()
		ref := newRef()
		res, err := h.collect(GatewayA, ref, "WAVE_SN", senegal("004"), "")
		require.NoError(t, err)
		require.Equal(t, gateway.NextRedirect, res.NextAction.Type)
		require.Equal(t, h.url+"/gw/"+GatewayA+"/checkout/"+ref, res.NextAction.URL)

		status, page := h.getPage(t, res.NextAction.URL)
		require.Equal(t, http.StatusOK, status)
		for _, want := range []string{"1500.00 XOF", "+221*****004", "Order 42", "Approve", "Decline", "PENDING"} {
			assert.Contains(t, page, want)
		}
		for _, external := range []string{"<script", "<link", "src=", "http://", "https://"} {
			assert.NotContains(t, page, external, "the page must be self-contained")
		}
	})

	t.Run("the timer needs no click", func(t *testing.T) {
		t.Parallel()
		ref := newRef()
		res, err := h.collect(GatewayA, ref, "WAVE_CI", "+2250700000000", "")
		require.NoError(t, err)
		h.receiver.requireCallbacks(t, ref, gateway.StatusSuccess)
		_, page := h.getPage(t, res.NextAction.URL)
		assert.Contains(t, page, "SUCCESS")
		assert.NotContains(t, page, "Approve")
	})

	t.Run("approve from the page", func(t *testing.T) {
		t.Parallel()
		ref := newRef()
		res, err := h.collect(GatewayA, ref, "WAVE_CI", "+2250700000004", "")
		require.NoError(t, err)
		_, page := h.getPage(t, res.NextAction.URL)
		action := formAction(t, page, "approve")

		resp, err := h.http.PostForm(h.url+action, url.Values{"return": {"checkout"}})
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		require.Equal(t, "/gw/"+GatewayA+"/checkout/"+ref, resp.Header.Get("Location"))
		h.receiver.requireCallbacks(t, ref, gateway.StatusSuccess)

		// A click on a stale page lands back on it, now final.
		resp, err = h.http.PostForm(h.url+formAction(t, page, "decline"), url.Values{"return": {"checkout"}})
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		_, page = h.getPage(t, res.NextAction.URL)
		assert.Contains(t, page, "SUCCESS")
	})

	t.Run("unknown page", func(t *testing.T) {
		t.Parallel()
		status, page := h.getPage(t, h.url+"/gw/"+GatewayA+"/checkout/nope")
		require.Equal(t, http.StatusNotFound, status)
		assert.Contains(t, page, "Unknown payment")
	})
}

// formAction returns the action of the page's form whose button has id button.
func formAction(t *testing.T, page, button string) string {
	t.Helper()
	for form := range strings.SplitSeq(page, "<form ") {
		if !strings.Contains(form, `id="`+button+`"`) {
			continue
		}
		_, rest, ok := strings.Cut(form, `action="`)
		require.True(t, ok)
		action, _, _ := strings.Cut(rest, `"`)
		return action
	}
	t.Fatalf("no %s button on the page", button)
	return ""
}

func TestManualCustomer(t *testing.T) {
	t.Parallel()
	h := newHarness(t, longTTL)
	decode := func(t *testing.T, raw []byte) OperationView {
		var v OperationView
		require.NoError(t, json.Unmarshal(raw, &v), string(raw))
		return v
	}
	errorCode := func(t *testing.T, raw []byte) string {
		var e errorBody
		require.NoError(t, json.Unmarshal(raw, &e), string(raw))
		return e.Error.Code
	}

	for _, tc := range []struct {
		name, action, opposite string
		start                  func(ref string) error
		kind                   gateway.CallbackKind
		status                 gateway.Status
		code                   string
	}{
		{name: "approve", action: "approve", opposite: "decline", kind: gateway.CallbackCollection,
			start: func(ref string) error {
				_, err := h.collect(GatewayB, ref, "MTN_BJ", phone("004"), "")
				return err
			},
			status: gateway.StatusSuccess},
		{name: "decline", action: "decline", opposite: "approve", kind: gateway.CallbackCollection,
			start: func(ref string) error {
				_, err := h.collect(GatewayA, ref, "MTN_BJ", phone("004"), "")
				return err
			},
			status: gateway.StatusFailed, code: gateway.FailurePayerDeclined},
		{name: "approve a payout", action: "approve", opposite: "decline", kind: gateway.CallbackDisbursement,
			start: func(ref string) error {
				_, err := h.disburse(GatewayA, ref, "MTN_BJ", phone("004"))
				return err
			},
			status: gateway.StatusSuccess},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ref := newRef()
			require.NoError(t, tc.start(ref))
			status, raw := h.post(t, "/sandbox/pushes/"+ref+"/"+tc.action, nil)
			require.Equal(t, http.StatusOK, status, string(raw))
			v := decode(t, raw)
			require.Equal(t, tc.kind, v.Kind)
			require.Equal(t, tc.status, v.Status)
			require.Equal(t, tc.code, v.FailureCode)
			h.receiver.requireCallbacks(t, ref, tc.status)

			status, raw = h.post(t, "/sandbox/pushes/"+ref+"/"+tc.opposite, nil)
			require.Equal(t, http.StatusConflict, status)
			require.Equal(t, "already_final", errorCode(t, raw))
		})
	}
	t.Run("callback rules still apply", func(t *testing.T) {
		t.Parallel()
		// A slower tick leaves the pushes pending long enough to be approved by hand.
		h := newHarness(t, func(cfg *Config, _ *ClientConfig) { cfg.Tick = 500 * time.Millisecond })
		ref007, ref008 := newRef(), newRef()
		_, err := h.collect(GatewayA, ref007, "MTN_BJ", phone("007"), "")
		require.NoError(t, err)
		_, err = h.disburse(GatewayA, ref008, "MTN_BJ", phone("008"))
		require.NoError(t, err)
		status, _ := h.post(t, "/sandbox/pushes/"+ref007+"/decline", nil)
		require.Equal(t, http.StatusOK, status)
		status, _ = h.post(t, "/sandbox/pushes/"+ref008+"/approve", nil)
		require.Equal(t, http.StatusOK, status)
		h.receiver.requireCallbacks(t, ref007)
		h.receiver.requireCallbacks(t, ref008, gateway.StatusSuccess, gateway.StatusSuccess, gateway.StatusPending)
	})
	t.Run("unknown", func(t *testing.T) {
		t.Parallel()
		status, raw := h.post(t, "/sandbox/pushes/nope/approve", nil)
		require.Equal(t, http.StatusNotFound, status)
		require.Equal(t, "not_found", errorCode(t, raw))
	})
	t.Run("listing", func(t *testing.T) {
		t.Parallel()
		ref := newRef()
		_, err := h.disburse(GatewayB, ref, "MTN_BJ", phone("004"))
		require.NoError(t, err)
		resp, err := h.http.Get(h.url + "/sandbox/operations?kind=disbursement&gateway=" + GatewayB)
		require.NoError(t, err)
		defer resp.Body.Close()
		var views []OperationView
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&views))
		var found bool
		for _, v := range views {
			require.Equal(t, GatewayB, v.Gateway)
			require.Equal(t, gateway.CallbackDisbursement, v.Kind)
			require.Equal(t, 1, v.Pushes)
			found = found || v.Reference == ref
		}
		require.True(t, found)
	})
}
