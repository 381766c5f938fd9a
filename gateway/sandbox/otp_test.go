package sandbox

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
)

func senegal(suffix string) string { return "+22177000" + suffix }
func togo(suffix string) string    { return "+2289000" + suffix }

func TestPrePaymentOTP(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	for name, otp := range map[string]string{"missing": "", "wrong": "654321"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ref := newRef()
			_, err := h.collect(GatewayA, ref, "ORANGE_SN", senegal("000"), otp)
			requireKind(t, err, gateway.KindDeclined, gateway.FailureInvalidOTP)
			_, exists := h.operation(t, ref)
			require.False(t, exists, "an OTP refusal created an operation")
		})
	}
	t.Run("right", func(t *testing.T) {
		t.Parallel()
		ref := newRef()
		res, err := h.collect(GatewayA, ref, "ORANGE_SN", senegal("000"), ValidOTP)
		require.NoError(t, err)
		require.Equal(t, gateway.StatusPending, res.Status)
		h.receiver.requireCallbacks(t, ref, gateway.StatusSuccess)
		h.requireOneOperation(t, ref, 1, 1)
	})
	t.Run("payouts need none", func(t *testing.T) {
		t.Parallel()
		ref := newRef()
		_, err := h.disburse(GatewayA, ref, "ORANGE_SN", senegal("000"))
		require.NoError(t, err)
		h.receiver.requireCallbacks(t, ref, gateway.StatusSuccess)
	})
}

func TestPostPushOTP(t *testing.T) {
	t.Parallel()
	h := newHarness(t, longTTL)
	ctx := context.Background()
	client := h.clients[GatewayB]
	start := func(t *testing.T, suffix string) string {
		t.Helper()
		ref := newRef()
		res, err := h.collect(GatewayB, ref, "MOOV_TG", togo(suffix), "")
		require.NoError(t, err)
		require.Equal(t, gateway.StatusPending, res.Status)
		require.Equal(t, gateway.NextOTPConfirmation, res.NextAction.Type)
		return ref
	}
	requireStatus := func(t *testing.T, ref string, status gateway.Status, code string) {
		t.Helper()
		got, err := client.CollectionStatus(ctx, ref)
		require.NoError(t, err)
		require.Equal(t, status, got.Status)
		require.Equal(t, code, got.FailureCode)
	}

	t.Run("three wrong codes fail it", func(t *testing.T) {
		t.Parallel()
		ref := start(t, "000")
		for range maxWrongOTPs - 1 {
			_, err := client.ConfirmOTP(ctx, ref, "000000")
			requireKind(t, err, gateway.KindDeclined, gateway.FailureInvalidOTP)
			requireStatus(t, ref, gateway.StatusPending, "")
		}
		_, err := client.ConfirmOTP(ctx, ref, "111111")
		requireKind(t, err, gateway.KindDeclined, gateway.FailureInvalidOTP)
		requireStatus(t, ref, gateway.StatusFailed, gateway.FailureInvalidOTP)
		h.receiver.requireCallbacks(t, ref, gateway.StatusFailed)

		_, err = client.ConfirmOTP(ctx, ref, ValidOTP)
		requireKind(t, err, gateway.KindInvalid, gateway.FailureGatewayError)
		require.Contains(t, err.Error(), "not_awaiting_otp")
	})
	t.Run("the right code starts the outcome", func(t *testing.T) {
		t.Parallel()
		ref := start(t, "000")
		// No outcome timer runs before the code is confirmed.
		require.Never(t, func() bool {
			got, err := client.CollectionStatus(ctx, ref)
			return err != nil || got.Status != gateway.StatusPending
		}, 5*tick, tick)
		_, err := client.ConfirmOTP(ctx, ref, "999999")
		requireKind(t, err, gateway.KindDeclined, gateway.FailureInvalidOTP)
		got, err := client.ConfirmOTP(ctx, ref, ValidOTP)
		require.NoError(t, err)
		require.Equal(t, gateway.StatusPending, got.Status)
		h.receiver.requireCallbacks(t, ref, gateway.StatusSuccess)
		requireStatus(t, ref, gateway.StatusSuccess, "")

		again, err := client.ConfirmOTP(ctx, ref, ValidOTP) // a retried confirmation
		require.NoError(t, err)
		require.Equal(t, gateway.StatusSuccess, again.Status)
		h.requireOneOperation(t, ref, 1, 1)
	})
	t.Run("the suffix rule runs after the code", func(t *testing.T) {
		t.Parallel()
		ref := start(t, "001")
		_, err := client.ConfirmOTP(ctx, ref, ValidOTP)
		require.NoError(t, err)
		h.receiver.requireCallbacks(t, ref, gateway.StatusFailed)
		requireStatus(t, ref, gateway.StatusFailed, gateway.FailurePayerDeclined)
	})
	t.Run("an unconfirmed push expires", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, func(cfg *Config, _ *ClientConfig) { cfg.PushTTL = 10 * tick })
		ref := newRef()
		_, err := h.collect(GatewayB, ref, "MOOV_TG", togo("000"), "")
		require.NoError(t, err)
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			got, err := h.clients[GatewayB].CollectionStatus(ctx, ref)
			require.NoError(c, err)
			assert.Equal(c, gateway.FailureExpired, got.FailureCode)
		}, patience, tick)
		h.receiver.requireCallbacks(t, ref, gateway.StatusFailed)
	})
	t.Run("other networks await no code", func(t *testing.T) {
		t.Parallel()
		ref := newRef()
		_, err := h.collect(GatewayB, ref, "MTN_BJ", phone("004"), "")
		require.NoError(t, err)
		_, err = client.ConfirmOTP(ctx, ref, ValidOTP)
		requireKind(t, err, gateway.KindInvalid, gateway.FailureGatewayError)
	})
	t.Run("unknown reference", func(t *testing.T) {
		t.Parallel()
		got, err := client.ConfirmOTP(ctx, newRef(), ValidOTP)
		require.NoError(t, err)
		require.Equal(t, gateway.StatusNotFound, got.Status)
	})
}
