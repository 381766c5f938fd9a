package main

import (
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/mtnmomo"
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
	liveMTN = "mtnmomo"
)

// LiveGateways is the configuration of the real operators that LIVE payments go to. An operator
// whose variables are absent is not configured: its networks answer network_unavailable in
// LIVE. Every secret may be given in the variable itself or, with the suffix _FILE, as the path
// of a file holding it (a mounted secret).
type LiveGateways struct {
	MTN *MTNGateway
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
	return live
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
	return gws
}

// names lists the configured operators, for the startup log.
func (l LiveGateways) names() []string {
	var out []string
	if l.MTN != nil {
		out = append(out, liveMTN)
	}
	return out
}
