package sika

import (
	"errors"
	"fmt"
	"strings"

	"github.com/shopspring/decimal"
)

// zeroDecimalCurrencies have no minor unit in practice: amounts must be whole numbers.
var zeroDecimalCurrencies = map[string]bool{"XOF": true, "XAF": true, "GNF": true}

// MinorUnits returns the number of decimals a currency's amounts may carry.
func MinorUnits(currency string) int32 {
	if zeroDecimalCurrencies[strings.ToUpper(currency)] {
		return 0
	}
	return 2
}

// ParseAmount parses a merchant-supplied amount: a decimal string with at most two decimals,
// a whole number for zero-decimal currencies (XOF, XAF, GNF), and greater than zero. The
// returned error is a merchant-safe message for the field (no float is ever involved).
func ParseAmount(raw, currency string) (decimal.Decimal, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return decimal.Decimal{}, errors.New(MsgRequired)
	}
	if !isPlainDecimal(s) {
		return decimal.Decimal{}, errors.New("A valid decimal number is required.")
	}
	d, err := decimal.NewFromString(s)
	if err != nil {
		return decimal.Decimal{}, errors.New("A valid decimal number is required.")
	}
	if d.Exponent() < -2 && !d.Equal(d.Round(2)) {
		return decimal.Decimal{}, errors.New("Ensure that there are no more than 2 decimal places.")
	}
	if !d.IsPositive() {
		return decimal.Decimal{}, errors.New("Ensure this value is greater than 0.")
	}
	if currency != "" && MinorUnits(currency) == 0 && !d.IsInteger() {
		return decimal.Decimal{}, fmt.Errorf("Amounts in %s must be whole numbers.", strings.ToUpper(currency))
	}
	if d.GreaterThan(maxAmount) {
		return decimal.Decimal{}, fmt.Errorf("Ensure this value is less than or equal to %s.", maxAmount.String())
	}
	return d, nil
}

// maxAmount bounds every amount to what a NUMERIC(20,2) column holds with room for fees.
var maxAmount = decimal.RequireFromString("999999999999.99")

// isPlainDecimal accepts digits with one optional dot: no sign, exponent, spaces or hex.
func isPlainDecimal(s string) bool {
	dot := false
	digits := 0
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == '.' && !dot && i > 0 && i < len(s)-1:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// FormatAmount renders an amount the way the API always sends it: exactly two decimals.
func FormatAmount(d decimal.Decimal) string {
	return d.StringFixed(2)
}

// Amount is a decimal that marshals to JSON as a string with exactly two decimals.
type Amount struct{ decimal.Decimal }

// MarshalJSON renders the amount as a two-decimal string.
func (a Amount) MarshalJSON() ([]byte, error) {
	return []byte(`"` + FormatAmount(a.Decimal) + `"`), nil
}

// NewAmount wraps a decimal for JSON output.
func NewAmount(d decimal.Decimal) Amount { return Amount{d} }
