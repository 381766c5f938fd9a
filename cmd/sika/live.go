package main

import (
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/mtnmomo"
	"github.com/sikahq/sika/gateway/orange"
	"github.com/sikahq/sika/gateway/wave"
)

// secret is a credential read from the environment. It never prints: fmt, slog and errors
// show "[redacted]", so a Config logged or wrapped in an error leaks nothing.
type secret string

func (secret) String() string                 { return "[redacted]" }
func (secret) GoString() string               { return "[redacted]" }
func (secret) LogValue() slog.Value           { return slog.StringValue("[redacted]") }
func (s secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// reveal is the credential itself, for the adapter that sends it.
func (s secret) reveal() string { return string(s) }

// Gateway names of the LIVE operators in the routing table (gateway_routes.gateway, the
// {gateway} of /gateway-callbacks/{gateway}/).
const (
	liveMTN    = "mtnmomo"
	liveWave   = "wave"
	liveOrange = "orange"
)

// LiveGateways is the configuration of the real operators that LIVE payments go to. An operator
// whose variables are absent is not configured: its networks answer network_unavailable in
// LIVE. Every secret may be given in the variable itself or, with the suffix _FILE, as the path
// of a file holding it (a mounted secret).
type LiveGateways struct {
	MTN    *MTNGateway
	Wave   *WaveGateway
	Orange *OrangeGateway
}

// MTNGateway is one MTN MoMo Open API account (SIKA_MTNMOMO_*).
type MTNGateway struct {
	BaseURL string // SIKA_MTNMOMO_BASE_URL, default https://proxy.momoapi.mtn.com
	APIUser string // SIKA_MTNMOMO_API_USER (a UUID)
	APIKey  secret // SIKA_MTNMOMO_API_KEY
	// Subscription keys per product; without SIKA_MTNMOMO_DISBURSEMENT_KEY payouts are refused.
	CollectionKey   secret // SIKA_MTNMOMO_COLLECTION_KEY
	DisbursementKey secret // SIKA_MTNMOMO_DISBURSEMENT_KEY
	// TargetEnvironments maps a country to X-Target-Environment
	// (SIKA_MTNMOMO_TARGET_ENVIRONMENTS, e.g. "BJ=mtnbenin,CI=mtnivorycoast"; default every
	// market of mtnmomo.LiveTargetEnvironments).
	TargetEnvironments map[string]string
}

// WaveGateway is one Wave Business account (SIKA_WAVE_*).
type WaveGateway struct {
	BaseURL       string // SIKA_WAVE_BASE_URL, default https://api.wave.com
	APIKey        secret // SIKA_WAVE_API_KEY: the Checkout API key
	PayoutAPIKey  secret // SIKA_WAVE_PAYOUT_API_KEY: the Payout API key; empty: payouts refused
	WebhookSecret secret // SIKA_WAVE_WEBHOOK_SECRET: signing secret of the webhook to /gateway-callbacks/wave/
	// Where Wave sends the customer back after paying or failing (https; "{reference}" is
	// replaced by the attempt's reference): SIKA_WAVE_SUCCESS_URL, SIKA_WAVE_ERROR_URL.
	SuccessURL, ErrorURL string
	// RestrictPayerMobile lets only the customer's own Wave account pay the session
	// (SIKA_WAVE_RESTRICT_PAYER_MOBILE, default true).
	RestrictPayerMobile bool
}

// OrangeGateway is one Orange Money WebPay merchant account (SIKA_ORANGE_*). WebPay only
// collects: payouts to Orange networks are not available in LIVE.
type OrangeGateway struct {
	BaseURL      string // SIKA_ORANGE_BASE_URL, default https://api.orange.com
	ClientID     string // SIKA_ORANGE_CLIENT_ID
	ClientSecret secret // SIKA_ORANGE_CLIENT_SECRET
	MerchantKey  secret // SIKA_ORANGE_MERCHANT_KEY
	// Where Orange's page sends the customer after paying or cancelling
	// (SIKA_ORANGE_RETURN_URL, SIKA_ORANGE_CANCEL_URL).
	ReturnURL, CancelURL string
	// CountrySegments maps a country to the {country} segment of the WebPay path
	// (SIKA_ORANGE_COUNTRY_SEGMENTS, e.g. "CI=ci,SN=sn"; default the lower-case ISO code).
	CountrySegments map[string]string
}

// envReader reads variables and collects what is wrong with them.
type envReader struct {
	getenv func(string) string
	errs   []string
}

// secret reads name, or the file named by name_FILE.
func (r *envReader) secret(name string) secret {
	v := r.getenv(name)
	if path := r.getenv(name + "_FILE"); path != "" {
		if v != "" {
			r.errs = append(r.errs, fmt.Sprintf("set %s or %s_FILE, not both", name, name))
			return ""
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			r.errs = append(r.errs, fmt.Sprintf("%s_FILE: cannot read %s", name, path))
			return ""
		}
		v = strings.TrimSpace(string(raw))
	}
	return secret(v)
}

// group reads a set of variables that configure one operator: all required ones present, or
// none (the operator is not configured). A partial set is an error naming what is missing.
func (r *envReader) group(prefix string, required map[string]string) bool {
	var present, missing []string
	for name, value := range required {
		if value != "" {
			present = append(present, name)
		} else {
			missing = append(missing, name)
		}
	}
	if len(present) == 0 {
		return false
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		r.errs = append(r.errs, fmt.Sprintf("%s is partly configured: set %s too", prefix, strings.Join(missing, ", ")))
		return false
	}
	return true
}

// loadLiveGateways reads the LIVE operators' configuration.
func loadLiveGateways(r *envReader) LiveGateways {
	var live LiveGateways
	mtn := MTNGateway{
		BaseURL:         orDefault(strings.TrimRight(r.getenv("SIKA_MTNMOMO_BASE_URL"), "/"), "https://proxy.momoapi.mtn.com"),
		APIUser:         r.getenv("SIKA_MTNMOMO_API_USER"),
		APIKey:          r.secret("SIKA_MTNMOMO_API_KEY"),
		CollectionKey:   r.secret("SIKA_MTNMOMO_COLLECTION_KEY"),
		DisbursementKey: r.secret("SIKA_MTNMOMO_DISBURSEMENT_KEY"),
	}
	if r.group("SIKA_MTNMOMO_*", map[string]string{
		"SIKA_MTNMOMO_API_USER": mtn.APIUser, "SIKA_MTNMOMO_API_KEY": mtn.APIKey.reveal(),
		"SIKA_MTNMOMO_COLLECTION_KEY": mtn.CollectionKey.reveal(),
	}) {
		mtn.TargetEnvironments = r.pairs("SIKA_MTNMOMO_TARGET_ENVIRONMENTS", mtnmomo.LiveTargetEnvironments)
		live.MTN = &mtn
	}
	wv := WaveGateway{
		BaseURL:       orDefault(strings.TrimRight(r.getenv("SIKA_WAVE_BASE_URL"), "/"), wave.DefaultBaseURL),
		APIKey:        r.secret("SIKA_WAVE_API_KEY"),
		PayoutAPIKey:  r.secret("SIKA_WAVE_PAYOUT_API_KEY"),
		WebhookSecret: r.secret("SIKA_WAVE_WEBHOOK_SECRET"),
		SuccessURL:    r.getenv("SIKA_WAVE_SUCCESS_URL"),
		ErrorURL:      r.getenv("SIKA_WAVE_ERROR_URL"),
	}
	if r.group("SIKA_WAVE_*", map[string]string{
		"SIKA_WAVE_API_KEY": wv.APIKey.reveal(), "SIKA_WAVE_WEBHOOK_SECRET": wv.WebhookSecret.reveal(),
		"SIKA_WAVE_SUCCESS_URL": wv.SuccessURL, "SIKA_WAVE_ERROR_URL": wv.ErrorURL,
	}) {
		wv.RestrictPayerMobile = r.boolean("SIKA_WAVE_RESTRICT_PAYER_MOBILE", true)
		live.Wave = &wv
	}
	om := OrangeGateway{
		BaseURL:      orDefault(strings.TrimRight(r.getenv("SIKA_ORANGE_BASE_URL"), "/"), orange.DefaultBaseURL),
		ClientID:     r.getenv("SIKA_ORANGE_CLIENT_ID"),
		ClientSecret: r.secret("SIKA_ORANGE_CLIENT_SECRET"),
		MerchantKey:  r.secret("SIKA_ORANGE_MERCHANT_KEY"),
		ReturnURL:    r.getenv("SIKA_ORANGE_RETURN_URL"),
		CancelURL:    r.getenv("SIKA_ORANGE_CANCEL_URL"),
	}
	if r.group("SIKA_ORANGE_*", map[string]string{
		"SIKA_ORANGE_CLIENT_ID": om.ClientID, "SIKA_ORANGE_CLIENT_SECRET": om.ClientSecret.reveal(),
		"SIKA_ORANGE_MERCHANT_KEY": om.MerchantKey.reveal(), "SIKA_ORANGE_RETURN_URL": om.ReturnURL,
		"SIKA_ORANGE_CANCEL_URL": om.CancelURL,
	}) {
		om.CountrySegments = r.pairs("SIKA_ORANGE_COUNTRY_SEGMENTS", nil)
		live.Orange = &om
	}
	return live
}

// boolean reads true/false (or 1/0), def when empty.
func (r *envReader) boolean(name string, def bool) bool {
	switch v := r.getenv(name); v {
	case "":
		return def
	case "true", "1":
		return true
	case "false", "0":
		return false
	default:
		r.errs = append(r.errs, fmt.Sprintf("%s=%q is not true or false", name, v))
		return def
	}
}

// pairs reads "K=V,K=V" (keys upper-cased), or def when the variable is empty.
func (r *envReader) pairs(name string, def map[string]string) map[string]string {
	v := r.getenv(name)
	if v == "" {
		return def
	}
	out := map[string]string{}
	for _, part := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok || strings.TrimSpace(k) == "" || strings.TrimSpace(val) == "" {
			r.errs = append(r.errs, fmt.Sprintf("%s: %q is not COUNTRY=value", name, part))
			continue
		}
		out[strings.ToUpper(strings.TrimSpace(k))] = strings.TrimSpace(val)
	}
	return out
}

// liveGateways builds the adapters of the configured operators. memory is shared by every
// process (Postgres), callbackBase is the service's public URL.
func (l LiveGateways) gateways(memory gateway.Memory, callbackBase string) []gateway.Gateway {
	var gws []gateway.Gateway
	if m := l.MTN; m != nil {
		gws = append(gws, mtnmomo.New(mtnmomo.Config{
			Name: liveMTN, BaseURL: m.BaseURL, APIUser: m.APIUser, APIKey: m.APIKey.reveal(),
			CollectionSubscriptionKey: m.CollectionKey.reveal(), DisbursementSubscriptionKey: m.DisbursementKey.reveal(),
			TargetEnvironment: m.TargetEnvironments,
			CallbackURL:       callbackBase + "/gateway-callbacks/" + liveMTN + "/",
			Memory:            memory,
		}))
	}
	if w := l.Wave; w != nil {
		gws = append(gws, wave.New(wave.Config{
			Name: liveWave, BaseURL: w.BaseURL, APIKey: w.APIKey.reveal(), PayoutAPIKey: w.PayoutAPIKey.reveal(),
			WebhookSecret: w.WebhookSecret.reveal(), SuccessURL: w.SuccessURL, ErrorURL: w.ErrorURL,
			RestrictPayerMobile: w.RestrictPayerMobile, Memory: memory,
		}))
	}
	if o := l.Orange; o != nil {
		gws = append(gws, orange.New(orange.Config{
			Name: liveOrange, BaseURL: o.BaseURL, ClientID: o.ClientID, ClientSecret: o.ClientSecret.reveal(),
			MerchantKey: o.MerchantKey.reveal(), CountrySegments: o.CountrySegments, ReturnURL: o.ReturnURL,
			CancelURL: o.CancelURL, NotifURL: callbackBase + "/gateway-callbacks/" + liveOrange + "/", Memory: memory,
		}))
	}
	return gws
}

// names lists the configured operators, for the startup log.
func (l LiveGateways) names() []string {
	var out []string
	if l.MTN != nil {
		out = append(out, liveMTN)
	}
	if l.Wave != nil {
		out = append(out, liveWave)
	}
	if l.Orange != nil {
		out = append(out, liveOrange)
	}
	return out
}
