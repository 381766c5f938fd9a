package activities

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/mtnmomo"
	"github.com/sikahq/sika/gateway/orange"
	"github.com/sikahq/sika/gateway/sandbox"
	"github.com/sikahq/sika/gateway/wave"
	"github.com/sikahq/sika/store"
)

// RefundVia picks the operator's own refund where the gateway that collected has one (whole
// only at Wave), else a payout on a route that pays out, else nothing (refund_unavailable).
func TestRefundVia(t *testing.T) {
	gws := gateway.NewRouter(gateway.HealthPolicy{},
		sandbox.NewClient(sandbox.ClientConfig{Name: "sandbox-a", BaseURL: "http://127.0.0.1:1"}),
		mtnmomo.New(mtnmomo.Config{Name: "mtn-bj", DisbursementSubscriptionKey: "k"}),
		mtnmomo.New(mtnmomo.Config{Name: "mtn-collect-only"}),
		wave.New(wave.Config{Name: "wave-sn", PayoutAPIKey: "k"}),
		wave.New(wave.Config{Name: "wave-checkout-only"}),
		orange.New(orange.Config{Name: "orange-ci"}),
	)
	paidAt := func(gw string) sika.TransactionAttempt { return sika.TransactionAttempt{Gateway: gw} }
	routes := func(gws ...string) []store.GatewayRoute {
		var out []store.GatewayRoute
		for i, g := range gws {
			out = append(out, store.GatewayRoute{Gateway: g, Priority: i + 1})
		}
		return out
	}
	for name, c := range map[string]struct {
		routes []store.GatewayRoute
		paid   string
		whole  bool
		via    store.RefundVia
		ok     bool
	}{
		"sandbox refunds its collections":             {routes("sandbox-a"), "sandbox-a", false, store.RefundViaOperator, true},
		"MTN refunds parts with the disbursement key": {routes("mtn-bj"), "mtn-bj", false, store.RefundViaOperator, true},
		"MTN without it pays out on another route":    {routes("mtn-collect-only", "mtn-bj"), "mtn-collect-only", false, store.RefundViaPayout, true},
		"Wave refunds a whole checkout":               {routes("wave-sn"), "wave-sn", true, store.RefundViaOperator, true},
		"Wave pays a part back":                       {routes("wave-sn"), "wave-sn", false, store.RefundViaPayout, true},
		"Wave without payouts refunds no part":        {routes("wave-checkout-only"), "wave-checkout-only", false, "", false},
		"Orange WebPay collects only":                 {routes("orange-ci"), "orange-ci", true, "", false},
		"a gateway this process does not reach":       {routes("gone"), "gone", true, "", false},
	} {
		t.Run(name, func(t *testing.T) {
			via, ok := RefundVia(gws, c.routes, paidAt(c.paid), c.whole)
			assert.Equal(t, c.ok, ok)
			assert.Equal(t, c.via, via)
		})
	}
}
