package sika

import (
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseAmount(t *testing.T) {
	cases := []struct {
		raw, currency string
		want          string
		wantErr       bool
	}{
		{"5000", "XOF", "5000", false},
		{"5000.00", "XOF", "5000", false},
		{"5000.50", "XOF", "", true},
		{"12.34", "EUR", "12.34", false},
		{"12.345", "EUR", "", true},
		{"12.340", "EUR", "12.34", false},
		{"0", "EUR", "", true},
		{"-5", "EUR", "", true},
		{"1e3", "EUR", "", true},
		{"", "EUR", "", true},
		{"abc", "EUR", "", true},
		{".5", "EUR", "", true},
		{"5.", "EUR", "", true},
		{" 7 ", "EUR", "7", false},
		{"1000000000000", "EUR", "", true},
	}
	for _, c := range cases {
		got, err := ParseAmount(c.raw, c.currency)
		if c.wantErr {
			assert.Error(t, err, "ParseAmount(%q, %q)", c.raw, c.currency)
			continue
		}
		require.NoError(t, err, "ParseAmount(%q, %q)", c.raw, c.currency)
		assert.True(t, got.Equal(decimal.RequireFromString(c.want)), "got %s, want %s", got, c.want)
	}
}

func TestFormatAmount(t *testing.T) {
	got := FormatAmount(decimal.RequireFromString("5000"))
	assert.Equal(t, "5000.00", got)
	b, err := NewAmount(decimal.RequireFromString("12.5")).MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `"12.50"`, string(b))
}

func TestScopeAllows(t *testing.T) {
	assert.True(t, ScopeBoth.Allows(ScopePayin))
	assert.True(t, ScopeBoth.Allows(ScopePayout))
	assert.True(t, ScopePayin.Allows(ScopePayin))
	assert.False(t, ScopePayin.Allows(ScopePayout))
	assert.False(t, ScopePayout.Allows(ScopePayin))
}
