package sika

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestConvertAmount(t *testing.T) {
	cases := []struct {
		name         string
		amount, rate string
		to           string
		want         string
	}{
		{"EUR to XOF rounds down to the unit", "10", "655.957", "XOF", "6559"},
		{"EUR to XOF rounds down above the half", "1", "655.957", "XOF", "655"},
		{"EUR to XOF rounds down below the half", "2", "655.2", "XOF", "1310"},
		{"XOF to XAF at par", "1000", "1", "XAF", "1000"},
		{"an exact product is kept", "1000", "655.957", "XOF", "655957"},
		{"XOF to EUR to the cent", "1000", "0.0015244901", "EUR", "1.52"},
		{"half a unit goes down (XOF)", "1", "2.5", "XOF", "2"},
		{"half a cent goes down (EUR)", "1", "0.125", "EUR", "0.12"},
		{"just below a whole cent goes down", "1", "0.12999", "EUR", "0.12"},
		{"GNF is zero-decimal", "1.50", "9350.5", "gnf", "14025"},
		{"CDF keeps two decimals", "3", "2850.333", "CDF", "8550.99"},
		{"lowercase target currency", "10", "655.957", "xof", "6559"},
		// Issue 21: half-up turned these into money.
		{"8 GNF (0.52 XOF) is less than 1 XOF", "8", "0.0652693532", "XOF", "0"},
		{"1 XOF (15.32 GNF) is 15 GNF", "1", "15.3211262323", "GNF", "15"},
		{"16 GNF is 1 XOF", "16", "0.0652693532", "XOF", "1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ConvertAmount(dec(c.amount), dec(c.rate), c.to)
			assert.True(t, got.Equal(dec(c.want)), "got %s, want %s", got, c.want)
		})
	}
}

func TestSmallestConvertible(t *testing.T) {
	cases := []struct {
		rate, from, to, want string
	}{
		{"0.0652693532", "GNF", "XOF", "16"},
		{"15.3211262323", "XOF", "GNF", "1"},
		{"1", "XOF", "XAF", "1"},
		{"0.3303482587", "GNF", "CDF", "1"},    // 1 GNF is 0.33 CDF
		{"0.0000995024", "GNF", "EUR", "101"},  // 100 GNF is 0.00995 EUR
		{"0.0015244901", "XOF", "EUR", "7"},    // 6 XOF is 0.0091 EUR
		{"0.0001", "CDF", "EUR", "100"},        // an exact quotient
		{"3.0271084337", "CDF", "GNF", "0.34"}, // 0.33 CDF is 0.998 GNF
		{"1000000", "EUR", "XOF", "0.01"},      // the smallest amount there is
		{"0.1975774096", "CDF", "XOF", "5.07"}, // 5.06 CDF is 0.9997 XOF
		{"0.0000000001", "XOF", "XAF", "10000000000"},
	}
	for _, c := range cases {
		got := SmallestConvertible(dec(c.rate), c.from, c.to)
		assert.True(t, got.Equal(dec(c.want)), "%s %s→%s: got %s, want %s", c.rate, c.from, c.to, got, c.want)
		assert.True(t, ConvertAmount(got, dec(c.rate), c.to).IsPositive(), "%s converts to something", got)
		less := got.Sub(dec("1").Shift(-MinorUnits(c.from)))
		assert.False(t, ConvertAmount(less, dec(c.rate), c.to).IsPositive(), "%s converts to nothing", less)
	}
}
