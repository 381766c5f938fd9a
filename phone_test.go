package sika

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Countries of the seeded catalogue, with their numbering plans.
var (
	benin       = Country{ISOCode: "BJ", Name: "Benin", CallingCode: "229", NationalNumberLengths: []int{8, 10}}
	coteDIvoire = Country{ISOCode: "CI", Name: "Côte d'Ivoire", CallingCode: "225", NationalNumberLengths: []int{10}}
	senegal     = Country{ISOCode: "SN", Name: "Senegal", CallingCode: "221", NationalNumberLengths: []int{9}}
	togo        = Country{ISOCode: "TG", Name: "Togo", CallingCode: "228", NationalNumberLengths: []int{8}}
	guinea      = Country{ISOCode: "GN", Name: "Guinea", CallingCode: "224", NationalNumberLengths: []int{9}}
	cameroon    = Country{ISOCode: "CM", Name: "Cameroon", CallingCode: "237", NationalNumberLengths: []int{9}}
	gabon       = Country{ISOCode: "GA", Name: "Gabon", CallingCode: "241", NationalNumberLengths: []int{8}}
	drCongo     = Country{ISOCode: "CD", Name: "DR Congo", CallingCode: "243", NationalNumberLengths: []int{9}}
)

func TestNormalizePhone(t *testing.T) {
	cases := []struct {
		country Country
		input   string
		want    string
	}{
		// Benin, 8 digits, in every accepted form.
		{benin, "+22997000000", "+22997000000"},
		{benin, "97000000", "+22997000000"},
		{benin, "0022997000000", "+22997000000"},
		{benin, "22997000000", "+22997000000"},
		{benin, "229 97 00 00 00", "+22997000000"},
		{benin, "+229 97-00-00-00", "+22997000000"},
		{benin, "(+229) 97.00.00.00", "+22997000000"},
		{benin, "  97 00 00 00\t", "+22997000000"},
		{benin, "00 229 97 00 00 00", "+22997000000"},
		// Benin, 10 digits.
		{benin, "+229 01 97 00 00 00", "+2290197000000"},
		{benin, "0197000000", "+2290197000000"},
		{benin, "2290197000000", "+2290197000000"},
		{benin, "002290197000000", "+2290197000000"},
		// A bare 10-digit national number that starts with 229: the code reading leaves 7
		// digits, so the national reading wins.
		{benin, "2290123456", "+2292290123456"},
		// A bare 8-digit national number that starts with 229.
		{benin, "22912345", "+22922912345"},
		// An 8-digit national number with code, which also starts with 229.
		{benin, "22922912345", "+22922912345"},
		// Côte d'Ivoire.
		{coteDIvoire, "+225 07 07 00 00 01", "+2250707000001"},
		{coteDIvoire, "0707000001", "+2250707000001"},
		{coteDIvoire, "2250707000001", "+2250707000001"},
		{coteDIvoire, "002250707000001", "+2250707000001"},
		// The other seeded countries.
		{senegal, "+221 77 000 00 01", "+221770000001"},
		{senegal, "770000001", "+221770000001"},
		{togo, "90 00 00 01", "+22890000001"},
		{togo, "0022890000001", "+22890000001"},
		{guinea, "622 00 00 01", "+224622000001"},
		{guinea, "+224622000001", "+224622000001"},
		{cameroon, "6 70 00 00 01", "+237670000001"},
		{cameroon, "237670000001", "+237670000001"},
		{gabon, "077 00 00 1", "+24107700001"},
		{gabon, "+241 07 70 00 01", "+24107700001"},
		{drCongo, "81 000 0001", "+243810000001"},
		{drCongo, "00243810000001", "+243810000001"},
	}
	for _, c := range cases {
		t.Run(c.country.ISOCode+" "+c.input, func(t *testing.T) {
			got, err := NormalizePhone(c.country, c.input)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

func TestNormalizePhoneInvalid(t *testing.T) {
	cases := []struct {
		country Country
		input   string
	}{
		{benin, ""},
		{benin, "   "},
		{benin, "+"},
		{benin, "()- ."},
		{benin, "9700000"},             // 7 digits
		{benin, "970000000"},           // 9 digits
		{benin, "97000000000"},         // 11 digits
		{benin, "+229970000000"},       // 9 national digits
		{benin, "+2299700000"},         // 7 national digits
		{benin, "+225 07 07 00 00 01"}, // Côte d'Ivoire's code
		{benin, "002250707000001"},     // Côte d'Ivoire's code
		{benin, "2250707000001"},       // 13 digits, not Benin's
		{benin, "+97000000"},           // "+" without the calling code
		{benin, "97OOOOOO"},            // letters O
		{benin, "97 00 00 0a"},
		{benin, "97000000 ext 1"},
		{benin, "229+97000000"}, // "+" after the start
		{benin, "++22997000000"},
		{benin, "+00 229 97 00 00 00"},
		{benin, "９７０００００"}, // full-width digits
		{benin, "97/00/00/00"},
		{coteDIvoire, "+22997000000"}, // Benin's code
		{coteDIvoire, "707000001"},    // 9 digits
		{senegal, "77000000"},
		{togo, "+229 90 00 00 01"},
		{drCongo, "+243 81 000 00011"},
	}
	for _, c := range cases {
		t.Run(c.country.ISOCode+" "+c.input, func(t *testing.T) {
			_, err := NormalizePhone(c.country, c.input)
			require.Error(t, err)
			got, want := err.Error(), "Enter a valid phone number for "+c.country.Name+"."
			assert.Equal(t, want, got)
		})
	}
}

func TestNormalizePhoneCountryOutsideThePlans(t *testing.T) {
	c := Country{ISOCode: "XX", Name: "Nowhere", CallingCode: "999", NationalNumberLengths: []int{8}}
	_, err := NormalizePhone(c, "97000000")
	assert.ErrorContains(t, err, "country XX is not in the numbering plans")
	_, err = NationalNumber(c, "+99997000000")
	assert.ErrorContains(t, err, "country XX is not in the numbering plans")
}

func TestNationalNumber(t *testing.T) {
	cases := []struct {
		country Country
		e164    string
		want    string
		wantErr bool
	}{
		{benin, "+22997000000", "97000000", false},
		{benin, "+2290197000000", "0197000000", false},
		{coteDIvoire, "+2250707000001", "0707000001", false},
		{drCongo, "+243810000001", "810000001", false},
		{benin, "22997000000", "", true},    // not E.164
		{benin, "+229 97000000", "", true},  // not normalized
		{benin, "+2299700000", "", true},    // 7 digits
		{benin, "+2250707000001", "", true}, // another country
		{benin, "+229", "", true},
		{benin, "", "", true},
	}
	for _, c := range cases {
		t.Run(c.country.ISOCode+" "+c.e164, func(t *testing.T) {
			got, err := NationalNumber(c.country, c.e164)
			if c.wantErr {
				require.Error(t, err)
				assert.Equal(t, "Enter a valid phone number for "+c.country.Name+".", err.Error())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// TestNormalizePhoneRoundTrip checks that a normalized number normalizes to itself and that
// its national part gives it back.
func TestNormalizePhoneRoundTrip(t *testing.T) {
	for _, c := range []struct {
		country Country
		input   string
	}{
		{benin, "97 00 00 00"}, {benin, "01 97 00 00 00"}, {coteDIvoire, "07 07 00 00 01"},
		{senegal, "77 000 00 01"}, {gabon, "07 70 00 01"},
	} {
		e164, err := NormalizePhone(c.country, c.input)
		require.NoError(t, err)
		again, err := NormalizePhone(c.country, e164)
		require.NoError(t, err)
		assert.Equal(t, e164, again)
		national, err := NationalNumber(c.country, e164)
		require.NoError(t, err)
		got, err := NormalizePhone(c.country, national)
		require.NoError(t, err)
		assert.Equal(t, e164, got)
	}
}

func TestMaskPhone(t *testing.T) {
	t.Parallel()
	require.Equal(t, "+229*****001", MaskPhone("+22997000001", "BJ"))
	require.Equal(t, "+225*******004", MaskPhone("+2250700000004", "CI"))
	require.Equal(t, "+33******678", MaskPhone("+33612345678", "FR"))
	require.Equal(t, "BJ:*****678", MaskPhone("+33612345678", "BJ"))
	require.Equal(t, "***", MaskPhone("+1", "US"))
}
