package sika

import (
	"strings"
	"testing"
)

// FuzzParseAmount: ParseAmount never panics, and an accepted amount is > 0, has at most two
// decimals (none for a zero-decimal currency), stays under the maximum and parses back from its
// wire form to the same value.
func FuzzParseAmount(f *testing.F) {
	for _, seed := range [][2]string{
		{"5000", "XOF"}, {"12.34", "GHS"}, {"0.01", "USD"}, {"1.005", "GHS"}, {"1.10", "XOF"}, {"-3", "GHS"},
		{"1e3", "GHS"}, {" 7 ", "XAF"}, {"999999999999.99", "GHS"}, {"1000000000000", "GHS"}, {"", "XOF"}, {".5", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, raw, currency string) {
		d, err := ParseAmount(raw, currency)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseAmount(%q, %q): an empty error message", raw, currency)
			}
			return
		}
		if !d.IsPositive() {
			t.Fatalf("ParseAmount(%q, %q) = %s, not > 0", raw, currency, d)
		}
		if !d.Equal(d.Round(2)) {
			t.Fatalf("ParseAmount(%q, %q) = %s: more than two decimals", raw, currency, d)
		}
		if MinorUnits(currency) == 0 && !d.IsInteger() {
			t.Fatalf("ParseAmount(%q, %q) = %s: not whole in a zero-decimal currency", raw, currency, d)
		}
		if d.GreaterThan(maxAmount) {
			t.Fatalf("ParseAmount(%q, %q) = %s: over the maximum", raw, currency, d)
		}
		wire := FormatAmount(d)
		back, err := ParseAmount(wire, "")
		if err != nil || !back.Equal(d) {
			t.Fatalf("ParseAmount(%q, %q) = %s, formatted %q, parses back to %s (%v)", raw, currency, d, wire, back, err)
		}
		if i := strings.IndexByte(wire, '.'); i < 0 || len(wire)-i-1 != 2 {
			t.Fatalf("FormatAmount(%s) = %q: want exactly two decimals", d, wire)
		}
	})
}

// FuzzNormalizePhone: NormalizePhone never panics, and an accepted number starts with "+" and
// the country's calling code, has a national part of the country, and normalises to itself.
func FuzzNormalizePhone(f *testing.F) {
	countries := []Country{benin, coteDIvoire, senegal, togo, guinea, cameroon, gabon, drCongo}
	for _, seed := range []struct {
		country byte
		input   string
	}{
		{0, "97000000"}, {0, "+229 97 00 00 00"}, {0, "0022997000000"}, {0, "2290123456"}, {0, "22997000000"},
		{1, "+225 07 07 07 07 07"}, {2, "77-123-45-67"}, {3, "(228) 90.00.00.00"}, {4, "+229 97000000"},
		{5, "+237+237"}, {6, "٠١٢٣"}, {7, ""}, {0, "+"}, {0, "97 00 00 0x"},
	} {
		f.Add(seed.country, seed.input)
	}
	f.Fuzz(func(t *testing.T, which byte, input string) {
		c := countries[int(which)%len(countries)]
		out, err := NormalizePhone(c, input)
		if err != nil {
			if out != "" {
				t.Fatalf("NormalizePhone(%s, %q) = %q with error %v", c.ISOCode, input, out, err)
			}
			return
		}
		if !strings.HasPrefix(out, "+"+c.CallingCode) {
			t.Fatalf("NormalizePhone(%s, %q) = %q: want the prefix +%s", c.ISOCode, input, out, c.CallingCode)
		}
		national, err := NationalNumber(c, out)
		if err != nil || !isDigits(national) {
			t.Fatalf("NormalizePhone(%s, %q) = %q: national part %q (%v)", c.ISOCode, input, out, national, err)
		}
		again, err := NormalizePhone(c, out)
		if err != nil || again != out {
			t.Fatalf("NormalizePhone(%s, %q) = %q, which normalises to %q (%v)", c.ISOCode, input, out, again, err)
		}
	})
}
