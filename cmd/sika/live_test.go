package main

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
)

func TestLiveGatewaysConfiguration(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "mtn_api_key")
	require.NoError(t, os.WriteFile(keyFile, []byte("api-key-from-a-file\n"), 0o600))
	env := map[string]string{
		"SIKA_MTNMOMO_API_USER":            "0c8a5b3e-7d1f-4c2a-9e6b-1f2d3c4b5a69",
		"SIKA_MTNMOMO_API_KEY_FILE":        keyFile,
		"SIKA_MTNMOMO_COLLECTION_KEY":      "collection-subscription-key",
		"SIKA_MTNMOMO_TARGET_ENVIRONMENTS": "bj=mtnbenin, CI=mtnivorycoast",
		"SIKA_WAVE_API_KEY":                "wave-checkout-key",
		"SIKA_WAVE_WEBHOOK_SECRET":         "wave-webhook-secret",
		"SIKA_WAVE_SUCCESS_URL":            "https://sika.example/paid/{reference}",
		"SIKA_WAVE_ERROR_URL":              "https://sika.example/failed/{reference}",
		"SIKA_ORANGE_CLIENT_ID":            "orange-client",
		"SIKA_ORANGE_CLIENT_SECRET":        "orange-client-secret",
		"SIKA_ORANGE_MERCHANT_KEY":         "orange-merchant-key",
		"SIKA_ORANGE_RETURN_URL":           "https://sika.example/orange/return",
		"SIKA_ORANGE_CANCEL_URL":           "https://sika.example/orange/cancel",
		"SIKA_ORANGE_COUNTRY_SEGMENTS":     "CI=ci,sn=sn",
	}
	cfg, err := loadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	require.NotNil(t, cfg.Live.MTN)
	assert.Equal(t, "api-key-from-a-file", cfg.Live.MTN.APIKey.reveal())
	assert.Equal(t, map[string]string{"BJ": "mtnbenin", "CI": "mtnivorycoast"}, cfg.Live.MTN.TargetEnvironments)
	require.NotNil(t, cfg.Live.Wave)
	assert.True(t, cfg.Live.Wave.RestrictPayerMobile)
	require.NotNil(t, cfg.Live.Orange)
	assert.Equal(t, map[string]string{"CI": "ci", "SN": "sn"}, cfg.Live.Orange.CountrySegments)
	assert.Equal(t, []string{liveMTN, liveWave, liveOrange}, cfg.Live.names())

	gws := cfg.Live.gateways(&gateway.MapMemory{}, "https://api.sika.example")
	require.Len(t, gws, 3)
	for i, name := range []string{liveMTN, liveWave, liveOrange} {
		assert.Equal(t, name, gws[i].Name())
	}

	// No secret in a log line, a formatted Config or an error.
	var logs bytes.Buffer
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("config", "cfg", cfg, "live", cfg.Live, "mtn", cfg.Live.MTN, "wave", cfg.Live.Wave, "orange", cfg.Live.Orange)
	for _, shown := range []string{logs.String(), fmt.Sprintf("%v %+v %#v %+v %#v", cfg, cfg.Live.MTN, *cfg.Live.MTN, *cfg.Live.Wave, *cfg.Live.Orange)} {
		for _, secret := range []string{"api-key-from-a-file", "collection-subscription-key", "wave-checkout-key", "wave-webhook-secret",
			"orange-client-secret", "orange-merchant-key"} {
			assert.NotContains(t, shown, secret)
		}
	}
}

func TestLiveGatewaysRefusePartialConfiguration(t *testing.T) {
	_, err := loadConfig(func(k string) string {
		return map[string]string{"SIKA_MTNMOMO_API_KEY": "a-secret-value"}[k]
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "SIKA_MTNMOMO_API_USER")
	assert.Contains(t, err.Error(), "SIKA_MTNMOMO_COLLECTION_KEY")
	assert.NotContains(t, err.Error(), "a-secret-value")

	_, err = loadConfig(func(k string) string {
		return map[string]string{"SIKA_MTNMOMO_API_KEY": "x", "SIKA_MTNMOMO_API_KEY_FILE": "/nonexistent"}[k]
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not both")

	// Nothing set: no LIVE operator, and that is fine (TEST works on the sandbox).
	cfg, err := loadConfig(func(string) string { return "" })
	require.NoError(t, err)
	assert.Empty(t, cfg.Live.names())
}
