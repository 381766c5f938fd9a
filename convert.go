package sika

import "github.com/shopspring/decimal"

// ConvertAmount converts amount into toCurrency at rate (units of toCurrency per unit of the
// amount's currency, as ExchangeRate.Rate) and rounds the product DOWN to toCurrency's minor
// unit (toward Sika): a converted amount is never worth more, at rate, than what it was
// converted from. Rounding to the nearest unit would let a merchant pick amounts that always
// round up (8 GNF, worth 0.52 XOF, would arrive as 1 XOF) and mint money by moving it back and
// forth between wallets. The amounts the service converts are positive; the product of a
// positive amount and a positive rate is rounded toward zero.
//
// The result may be zero: a caller that credits it refuses the conversion instead
// (SmallestConvertible says how much is needed).
func ConvertAmount(amount, rate decimal.Decimal, toCurrency string) decimal.Decimal {
	return amount.Mul(rate).RoundFloor(MinorUnits(toCurrency))
}

// SmallestConvertible returns the smallest amount of fromCurrency (a whole number of its minor
// units) that ConvertAmount turns into at least one minor unit of toCurrency at rate: 16 GNF
// for GNF to XOF at 0.0652693532. rate must be positive.
func SmallestConvertible(rate decimal.Decimal, fromCurrency, toCurrency string) decimal.Decimal {
	unit := decimal.New(1, -MinorUnits(toCurrency))
	step := decimal.New(1, -MinorUnits(fromCurrency))
	// The quotient is rounded at 20 decimals, so it may fall a hair short of the exact one;
	// ConvertAmount decides.
	least := unit.DivRound(rate, 20).RoundCeil(MinorUnits(fromCurrency))
	if !least.IsPositive() {
		least = step
	}
	for !ConvertAmount(least, rate, toCurrency).IsPositive() {
		least = least.Add(step)
	}
	return least
}
