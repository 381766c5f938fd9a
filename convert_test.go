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
		{"EUR to XOF rounds to the unit", "10", "655.957", "XOF", "6560"},
		{"EUR to XOF rounds up above the half", "1", "655.957", "XOF", "656"},
		{"EUR to XOF rounds down below the half", "2", "655.2", "XOF", "1310"},
		{"XOF to XAF at par", "1000", "1", "XAF", "1000"},
		{"XOF to EUR to the cent", "1000", "0.0015244902", "EUR", "1.52"},
		{"half a unit goes up (XOF)", "1", "2.5", "XOF", "3"},
		{"half a cent goes up (EUR)", "1", "0.125", "EUR", "0.13"},
		{"just below half a cent goes down", "1", "0.12499", "EUR", "0.12"},
		{"GNF is zero-decimal", "1.50", "9350.5", "gnf", "14026"},
		{"CDF keeps two decimals", "3", "2850.333", "CDF", "8551"},
		{"lowercase target currency", "10", "655.957", "xof", "6560"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ConvertAmount(dec(c.amount), dec(c.rate), c.to)
			assert.True(t, got.Equal(dec(c.want)), "got %s, want %s", got, c.want)
		})
	}
}
