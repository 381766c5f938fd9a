package sika

import (
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dec parses a decimal literal of a test.
func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// decPtr parses a decimal literal of a test into a pointer, for optional bounds.
func decPtr(s string) *decimal.Decimal {
	d := dec(s)
	return &d
}

// percentRule is a fee rule of a percentage and a fixed part without bounds.
func percentRule(pct, fixed string) FeeRule {
	return FeeRule{Percentage: dec(pct), Fixed: dec(fixed)}
}

// assertDecimal fails when got and want are not the same number.
func assertDecimal(t *testing.T, got decimal.Decimal, want, name string) {
	t.Helper()
	assert.True(t, got.Equal(dec(want)), "%s: got %s, want %s", name, got, want)
}

func TestComputeFees(t *testing.T) {
	cases := []struct {
		name      string
		direction Direction
		amount    string
		currency  string
		fee, cost FeeRule
		mode      FeeChargeMode
		// want: client, gateway, platform, debited, net
		client, gateway, platform, debited, net string
	}{
		{
			name: "XOF exact percentage", direction: DirectionInbound, amount: "1000", currency: "XOF",
			fee: percentRule("1.5", "0"), cost: percentRule("1", "0"), mode: FeeAddOn,
			client: "15", gateway: "10", platform: "5", debited: "1015", net: "1000",
		},
		{
			name: "XOF fraction rounded up", direction: DirectionInbound, amount: "1001", currency: "XOF",
			fee: percentRule("1.5", "0"), cost: percentRule("1", "0"), mode: FeeAddOn,
			client: "16", gateway: "11", platform: "5", debited: "1017", net: "1001",
		},
		{
			name: "XOF deducted", direction: DirectionInbound, amount: "1001", currency: "XOF",
			fee: percentRule("1.5", "0"), cost: percentRule("1", "0"), mode: FeeDeducted,
			client: "16", gateway: "11", platform: "5", debited: "1001", net: "985",
		},
		{
			name: "EUR rounded up to the cent", direction: DirectionInbound, amount: "10.01", currency: "EUR",
			fee: percentRule("1.5", "0"), cost: percentRule("0", "0"), mode: FeeAddOn,
			client: "0.16", gateway: "0", platform: "0.16", debited: "10.17", net: "10.01",
		},
		{
			name: "EUR exact cents", direction: DirectionInbound, amount: "10.00", currency: "EUR",
			fee: percentRule("1.5", "0"), cost: percentRule("0", "0"), mode: FeeDeducted,
			client: "0.15", gateway: "0", platform: "0.15", debited: "10.00", net: "9.85",
		},
		{
			name: "fixed part added", direction: DirectionInbound, amount: "1000", currency: "XOF",
			fee: percentRule("1", "25"), cost: percentRule("0", "20"), mode: FeeAddOn,
			client: "35", gateway: "20", platform: "15", debited: "1035", net: "1000",
		},
		{
			name: "minimum fee", direction: DirectionInbound, amount: "100", currency: "XOF",
			fee:  FeeRule{Percentage: dec("1"), Fixed: dec("0"), MinFee: decPtr("50")},
			cost: percentRule("0", "0"), mode: FeeAddOn,
			client: "50", gateway: "0", platform: "50", debited: "150", net: "100",
		},
		{
			name: "maximum fee", direction: DirectionInbound, amount: "1000000", currency: "XOF",
			fee:  FeeRule{Percentage: dec("2"), Fixed: dec("0"), MaxFee: decPtr("5000")},
			cost: percentRule("1", "0"), mode: FeeAddOn,
			client: "5000", gateway: "5000", platform: "0", debited: "1005000", net: "1000000",
		},
		{
			name: "bounds not reached", direction: DirectionInbound, amount: "10000", currency: "XOF",
			fee:  FeeRule{Percentage: dec("2"), Fixed: dec("0"), MinFee: decPtr("50"), MaxFee: decPtr("5000")},
			cost: percentRule("0", "0"), mode: FeeAddOn,
			client: "200", gateway: "0", platform: "200", debited: "10200", net: "10000",
		},
		{
			name: "maximum wins over a larger minimum", direction: DirectionInbound, amount: "1000", currency: "XOF",
			fee:  FeeRule{Percentage: dec("1"), Fixed: dec("0"), MinFee: decPtr("100"), MaxFee: decPtr("40")},
			cost: percentRule("0", "0"), mode: FeeAddOn,
			client: "40", gateway: "0", platform: "40", debited: "1040", net: "1000",
		},
		{
			name: "maximum with more decimals rounded up", direction: DirectionInbound, amount: "100", currency: "EUR",
			fee:  FeeRule{Percentage: dec("10"), Fixed: dec("0"), MaxFee: decPtr("0.125")},
			cost: percentRule("0", "0"), mode: FeeAddOn,
			client: "0.13", gateway: "0", platform: "0.13", debited: "100.13", net: "100",
		},
		{
			name: "gateway fee capped at client fee", direction: DirectionInbound, amount: "1000", currency: "XOF",
			fee: percentRule("1", "0"), cost: percentRule("2", "5"), mode: FeeAddOn,
			client: "10", gateway: "10", platform: "0", debited: "1010", net: "1000",
		},
		{
			name: "gateway fee rounded up", direction: DirectionInbound, amount: "1001", currency: "XOF",
			fee: percentRule("3", "0"), cost: percentRule("0.5", "0"), mode: FeeAddOn,
			client: "31", gateway: "6", platform: "25", debited: "1032", net: "1001",
		},
		{
			name: "zero fee", direction: DirectionInbound, amount: "1", currency: "XOF",
			fee: percentRule("0", "0"), cost: percentRule("0", "0"), mode: FeeDeducted,
			client: "0", gateway: "0", platform: "0", debited: "1", net: "1",
		},
		{
			name: "payout add-on: wallet pays the fee", direction: DirectionOutbound, amount: "5000", currency: "XOF",
			fee: percentRule("1", "0"), cost: percentRule("0.5", "0"), mode: FeeAddOn,
			client: "50", gateway: "25", platform: "25", debited: "5050", net: "5000",
		},
		{
			name: "payout deducted: beneficiary bears the fee", direction: DirectionOutbound, amount: "5000", currency: "XOF",
			fee: percentRule("1", "0"), cost: percentRule("0.5", "0"), mode: FeeDeducted,
			client: "50", gateway: "25", platform: "25", debited: "5000", net: "4950",
		},
		{
			name: "payout in XAF rounded up", direction: DirectionOutbound, amount: "333", currency: "XAF",
			fee: percentRule("1", "0"), cost: percentRule("0", "0"), mode: FeeDeducted,
			client: "4", gateway: "0", platform: "4", debited: "333", net: "329",
		},
		{
			name: "GNF is zero-decimal", direction: DirectionInbound, amount: "10050", currency: "gnf",
			fee: percentRule("0.1", "0"), cost: percentRule("0", "0"), mode: FeeAddOn,
			client: "11", gateway: "0", platform: "11", debited: "10061", net: "10050",
		},
		{
			name: "USD deducted with fixed cents", direction: DirectionOutbound, amount: "20.00", currency: "USD",
			fee: percentRule("2.5", "0.30"), cost: percentRule("1", "0.10"), mode: FeeDeducted,
			client: "0.80", gateway: "0.30", platform: "0.50", debited: "20.00", net: "19.20",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := Pricing{Direction: c.direction, Fee: c.fee, GatewayCost: c.cost}
			got, err := ComputeFees(c.direction, dec(c.amount), c.currency, p, c.mode)
			require.NoError(t, err)
			assertDecimal(t, got.RequestedAmount, c.amount, "requested")
			assertDecimal(t, got.ClientFee, c.client, "client fee")
			assertDecimal(t, got.GatewayFee, c.gateway, "gateway fee")
			assertDecimal(t, got.PlatformFee, c.platform, "platform fee")
			assertDecimal(t, got.DebitedAmount, c.debited, "debited")
			assertDecimal(t, got.NetAmount, c.net, "net")
			assert.Equal(t, c.mode, got.Mode)
		})
	}
}

func TestComputeFeesErrors(t *testing.T) {
	cases := []struct {
		name      string
		direction Direction
		amount    string
		currency  string
		pricing   Pricing
		mode      FeeChargeMode
		wantCode  Code
	}{
		{
			name: "deducted fee equal to the amount", direction: DirectionInbound, amount: "100", currency: "XOF",
			pricing: Pricing{Fee: percentRule("0", "100")}, mode: FeeDeducted, wantCode: CodeAmountOutOfRange,
		},
		{
			name: "deducted fee above the amount", direction: DirectionInbound, amount: "10", currency: "XOF",
			pricing: Pricing{Fee: FeeRule{Percentage: dec("1"), MinFee: decPtr("50")}}, mode: FeeDeducted,
			wantCode: CodeAmountOutOfRange,
		},
		{
			name: "payout deducted fee eats the amount", direction: DirectionOutbound, amount: "0.10", currency: "EUR",
			pricing: Pricing{Fee: percentRule("1", "0.10")}, mode: FeeDeducted, wantCode: CodeAmountOutOfRange,
		},
		{
			name: "zero amount", direction: DirectionInbound, amount: "0", currency: "XOF",
			pricing: Pricing{}, mode: FeeAddOn, wantCode: CodeAmountOutOfRange,
		},
		{
			name: "negative amount", direction: DirectionOutbound, amount: "-5", currency: "XOF",
			pricing: Pricing{}, mode: FeeAddOn, wantCode: CodeAmountOutOfRange,
		},
		{
			name: "unknown mode", direction: DirectionInbound, amount: "100", currency: "XOF",
			pricing: Pricing{}, mode: "SPLIT", wantCode: CodeInternal,
		},
		{
			name: "empty mode", direction: DirectionInbound, amount: "100", currency: "XOF",
			pricing: Pricing{}, mode: "", wantCode: CodeInternal,
		},
		{
			name: "unknown direction", direction: "SIDEWAYS", amount: "100", currency: "XOF",
			pricing: Pricing{}, mode: FeeAddOn, wantCode: CodeInternal,
		},
		{
			name: "pricing of the other direction", direction: DirectionInbound, amount: "100", currency: "XOF",
			pricing: Pricing{Direction: DirectionOutbound}, mode: FeeAddOn, wantCode: CodeInternal,
		},
		{
			name: "decimals in a zero-decimal currency", direction: DirectionInbound, amount: "100.5", currency: "XOF",
			pricing: Pricing{}, mode: FeeAddOn, wantCode: CodeInternal,
		},
		{
			name: "three decimals in EUR", direction: DirectionInbound, amount: "1.005", currency: "EUR",
			pricing: Pricing{}, mode: FeeAddOn, wantCode: CodeInternal,
		},
		{
			name: "negative client fee", direction: DirectionInbound, amount: "100", currency: "XOF",
			pricing: Pricing{Fee: percentRule("-1", "0")}, mode: FeeAddOn, wantCode: CodeInternal,
		},
		{
			name: "negative gateway cost", direction: DirectionInbound, amount: "100", currency: "XOF",
			pricing: Pricing{Fee: percentRule("1", "0"), GatewayCost: percentRule("0", "-2")}, mode: FeeAddOn,
			wantCode: CodeInternal,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ComputeFees(c.direction, dec(c.amount), c.currency, c.pricing, c.mode)
			require.Error(t, err)
			got, want := ErrorCode(err), c.wantCode
			assert.Equal(t, want, got, "error %v", err)
		})
	}
}

func TestComputeFeesOutOfRangeMessage(t *testing.T) {
	p := Pricing{Fee: FeeRule{Percentage: dec("1"), MinFee: decPtr("50")}}
	_, err := ComputeFees(DirectionInbound, dec("40"), "xof", p, FeeDeducted)
	var e *Error
	require.ErrorAs(t, err, &e)
	got, want := e.Message, "The amount must be greater than the fee of 50.00 XOF."
	assert.Equal(t, want, got)
}

// TestComputeFeesInvariants checks the identities of Fees over many generated amounts and
// pricing rules, in every currency kind, direction and mode.
func TestComputeFeesInvariants(t *testing.T) {
	rng := rand.New(rand.NewPCG(20261121, 1))
	pricings := []Pricing{
		{Fee: percentRule("1.5", "0"), GatewayCost: percentRule("1", "0")},
		{Fee: percentRule("0.75", "25"), GatewayCost: percentRule("0.333", "10")},
		{Fee: percentRule("1", "0"), GatewayCost: percentRule("3", "7")}, // gateway above client
		{
			Fee:         FeeRule{Percentage: dec("2.25"), Fixed: dec("0.5"), MinFee: decPtr("100"), MaxFee: decPtr("7500.5")},
			GatewayCost: FeeRule{Percentage: dec("1.125"), MinFee: decPtr("60.25"), MaxFee: decPtr("5000")},
		},
		{Fee: percentRule("0", "0"), GatewayCost: percentRule("0", "0")},
	}
	currencies := []string{"XOF", "XAF", "GNF", "EUR", "USD", "CDF"}
	directions := []Direction{DirectionInbound, DirectionOutbound}
	modes := []FeeChargeMode{FeeAddOn, FeeDeducted}

	checked := 0
	for range 20000 {
		currency := currencies[rng.IntN(len(currencies))]
		units := MinorUnits(currency)
		// Amounts from one minor unit to ten million units, spread over the magnitudes.
		scale := int64(1)
		for range rng.IntN(10) {
			scale *= 10
		}
		amount := decimal.New(1+rng.Int64N(scale), -units)
		p := pricings[rng.IntN(len(pricings))]
		direction := directions[rng.IntN(len(directions))]
		mode := modes[rng.IntN(len(modes))]

		f, err := ComputeFees(direction, amount, currency, p, mode)
		if err != nil {
			// Only a deducted fee that eats the amount may refuse a valid amount.
			require.Equal(t, CodeAmountOutOfRange, ErrorCode(err), "%s %s %s: %v", amount, currency, mode, err)
			require.Equal(t, FeeDeducted, mode, "%s %s: %v", amount, currency, err)
			continue
		}
		checked++
		where := func(what string) string {
			return what + " for " + amount.String() + " " + currency + " " + string(direction) + " " + string(mode)
		}
		assert.True(t, f.DebitedAmount.Sub(f.NetAmount).Equal(f.ClientFee), where("debited − net == client fee"))
		assert.True(t, f.GatewayFee.Add(f.PlatformFee).Equal(f.ClientFee), where("gateway + platform == client fee"))
		assert.False(t, f.PlatformFee.IsNegative(), where("platform fee ≥ 0"))
		assert.False(t, f.GatewayFee.IsNegative(), where("gateway fee ≥ 0"))
		assert.True(t, f.NetAmount.IsPositive(), where("net > 0"))
		assert.True(t, f.RequestedAmount.Equal(amount), where("requested == amount"))
		for name, v := range map[string]decimal.Decimal{
			"requested": f.RequestedAmount, "client": f.ClientFee, "gateway": f.GatewayFee,
			"platform": f.PlatformFee, "debited": f.DebitedAmount, "net": f.NetAmount,
		} {
			assert.True(t, v.Equal(v.Truncate(units)), where(name+" "+v.String()+" has at most the minor-unit decimals"))
		}
		// The fee is never below the exact one: rounding only ever goes up.
		exact := amount.Mul(p.Fee.Percentage).Shift(-2).Add(p.Fee.Fixed)
		if p.Fee.MinFee != nil {
			exact = decimal.Max(exact, *p.Fee.MinFee)
		}
		if p.Fee.MaxFee != nil {
			exact = decimal.Min(exact, *p.Fee.MaxFee)
		}
		assert.True(t, f.ClientFee.GreaterThanOrEqual(exact), where("client fee ≥ exact fee"))
		assert.True(t, f.ClientFee.Sub(exact).LessThan(decimal.New(1, -units)), where("client fee < exact fee + one unit"))
	}
	assert.Greater(t, checked, 15000, "too few generated amounts were priced")
}
