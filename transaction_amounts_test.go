package sika

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAmountEquationsEveryTypeAndMode: the amounts of every transaction type in every fee mode,
// as the API prices them (ComputeFees for collections and payouts, no fee for settlements and
// wallet transfers), keep their meanings (CheckAmounts), and a record that breaks one is refused.
func TestAmountEquationsEveryTypeAndMode(t *testing.T) {
	pricing := Pricing{Fee: FeeRule{Percentage: dec("1.5")}, GatewayCost: FeeRule{Percentage: dec("1")}}
	for _, typ := range []TransactionType{TypePayment, TypeTopUp, TypePayout, TypeTransfer} {
		for _, mode := range []FeeChargeMode{FeeAddOn, FeeDeducted} {
			name := string(typ) + " " + string(mode)
			tx := Transaction{Reference: name, Type: typ, FeeChargeMode: mode}
			if typ == TypeTransfer {
				// Settlements (RETRAIT) and transfers carry no fee: the three amounts are equal.
				a := NewAmount(dec("831"))
				tx.RequestedAmount, tx.DebitedAmount, tx.NetAmount = a, a, a
			} else {
				pricing.Direction = typ.FlowDirection()
				f, err := ComputeFees(typ.FlowDirection(), dec("831"), "XOF", pricing, mode)
				require.NoError(t, err, name)
				tx.RequestedAmount, tx.ClientFee, tx.GatewayFee, tx.PlatformFee = NewAmount(f.RequestedAmount), NewAmount(f.ClientFee), NewAmount(f.GatewayFee), NewAmount(f.PlatformFee)
				tx.DebitedAmount, tx.NetAmount = NewAmount(f.DebitedAmount), NewAmount(f.NetAmount)
				want := map[FeeChargeMode][2]string{FeeAddOn: {"844", "831"}, FeeDeducted: {"831", "818"}}[mode] // 1.5 % of 831 is 12.47, rounded up
				assert.Equal(t, want, [2]string{tx.DebitedAmount.String(), tx.NetAmount.String()}, name)
			}
			require.NoError(t, tx.CheckAmounts(), name)

			for what, broken := range map[string]func(*Transaction){
				"net_amount = debited_amount despite a fee": func(b *Transaction) {
					b.NetAmount = b.DebitedAmount
					b.ClientFee = NewAmount(dec("9"))
					b.PlatformFee = NewAmount(dec("9"))
				},
				"client_fee ≠ gateway + platform": func(b *Transaction) { b.GatewayFee = NewAmount(b.GatewayFee.Add(dec("1"))) },
				"a negative amount": func(b *Transaction) {
					b.PlatformFee = NewAmount(dec("-1"))
					b.ClientFee = NewAmount(b.GatewayFee.Sub(dec("1")))
				},
				"the mode's equation": func(b *Transaction) {
					b.RequestedAmount = NewAmount(b.RequestedAmount.Add(dec("1")))
				},
			} {
				b := tx
				broken(&b)
				assert.Error(t, b.CheckAmounts(), "%s: %s", name, what)
			}
		}
	}
}
