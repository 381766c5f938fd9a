package sika

import (
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// Fees is the price of one payment or payout, all in the transaction currency.
//
// For every Fees that ComputeFees returns: DebitedAmount − NetAmount == ClientFee,
// ClientFee == GatewayFee + PlatformFee, PlatformFee ≥ 0, NetAmount > 0, and no value carries
// more decimals than the currency's minor unit.
type Fees struct {
	RequestedAmount decimal.Decimal // what the merchant asked
	ClientFee       decimal.Decimal // total fee charged (shown to the customer on ADD_ON)
	GatewayFee      decimal.Decimal // operator cost inside ClientFee
	PlatformFee     decimal.Decimal // ClientFee - GatewayFee (never negative)
	// DebitedAmount is, INBOUND, what the customer pays; OUTBOUND, what leaves the merchant
	// wallet.
	DebitedAmount decimal.Decimal
	// NetAmount is, INBOUND, what the merchant wallet gains; OUTBOUND, what the beneficiary
	// receives (what the wallet loses is DebitedAmount).
	NetAmount decimal.Decimal
	Mode      FeeChargeMode
}

// ComputeFees prices a payment (INBOUND) or a payout (OUTBOUND) of amount in currency.
//
// The fee of a rule is amount × Percentage/100 + Fixed, raised to MinFee and then lowered to
// MaxFee when they are set (so MaxFee wins if a rule has MinFee > MaxFee), then rounded UP to
// the currency's minor unit: a fee never loses the platform a fraction of a unit. ClientFee
// comes from p.Fee, GatewayFee from p.GatewayCost capped at ClientFee, and PlatformFee is the
// rest.
//
// ADD_ON puts the fee on top: DebitedAmount = amount + fee (the customer pays it, or the
// merchant wallet is debited it) and NetAmount = amount. DEDUCTED takes it out:
// DebitedAmount = amount and NetAmount = amount − fee. The two directions share these
// formulas; only the meaning of DebitedAmount and NetAmount differs (see Fees).
//
// A non-positive amount, or a DEDUCTED fee that eats the whole amount, is an *Error with
// code amount_out_of_range. An unknown direction or mode, a pricing row of the other
// direction, an amount with more decimals than the currency allows (ParseAmount refuses
// those) and a rule that yields a negative fee are programming or configuration errors.
func ComputeFees(direction Direction, amount decimal.Decimal, currency string, p Pricing, mode FeeChargeMode) (Fees, error) {
	if !direction.Valid() {
		return Fees{}, fmt.Errorf("compute fees: unknown direction %q", direction)
	}
	if !mode.Valid() {
		return Fees{}, fmt.Errorf("compute fees: unknown fee charge mode %q", mode)
	}
	if p.Direction != "" && p.Direction != direction {
		return Fees{}, fmt.Errorf("compute fees: %s pricing used for an %s amount", p.Direction, direction)
	}
	if !amount.IsPositive() {
		return Fees{}, Errorf(CodeAmountOutOfRange, "The amount must be greater than 0.")
	}
	units := MinorUnits(currency)
	if !amount.Equal(amount.Truncate(units)) {
		return Fees{}, fmt.Errorf("compute fees: amount %s has more than %d decimals for %s", amount, units, currency)
	}
	clientFee, err := p.Fee.feeFor(amount, units)
	if err != nil {
		return Fees{}, fmt.Errorf("compute fees: client fee: %w", err)
	}
	gatewayFee, err := p.GatewayCost.feeFor(amount, units)
	if err != nil {
		return Fees{}, fmt.Errorf("compute fees: gateway fee: %w", err)
	}
	gatewayFee = decimal.Min(gatewayFee, clientFee)

	f := Fees{
		RequestedAmount: amount,
		ClientFee:       clientFee,
		GatewayFee:      gatewayFee,
		PlatformFee:     clientFee.Sub(gatewayFee),
		Mode:            mode,
	}
	switch mode {
	case FeeAddOn:
		f.DebitedAmount = amount.Add(clientFee)
		f.NetAmount = amount
	case FeeDeducted:
		f.DebitedAmount = amount
		f.NetAmount = amount.Sub(clientFee)
	}
	if !f.NetAmount.IsPositive() {
		return Fees{}, Errorf(CodeAmountOutOfRange, "The amount must be greater than the fee of %s %s.",
			FormatAmount(clientFee), strings.ToUpper(currency))
	}
	return f, nil
}

// feeFor applies the rule to amount and rounds the result up to units decimals. The
// percentage is applied with Shift, not Div, so that no digit is lost before rounding.
func (r FeeRule) feeFor(amount decimal.Decimal, units int32) (decimal.Decimal, error) {
	fee := amount.Mul(r.Percentage).Shift(-2).Add(r.Fixed)
	if r.MinFee != nil && fee.LessThan(*r.MinFee) {
		fee = *r.MinFee
	}
	if r.MaxFee != nil && fee.GreaterThan(*r.MaxFee) {
		fee = *r.MaxFee
	}
	if fee.IsNegative() {
		return decimal.Decimal{}, fmt.Errorf("rule yields a negative fee %s on %s", fee, amount)
	}
	return fee.RoundCeil(units), nil
}
