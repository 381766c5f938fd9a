package sika

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// NormalizePhone returns the E.164 form (+<calling code><national number>) of a phone number of the
// country, or an error with a merchant-safe message.
//
// Spaces, dashes, dots and parentheses are ignored. The number may be written +<code><national>,
// 00<code><national>, <code><national> or as the bare national number; the national number must
// be digits only, with one of the country's NationalNumberLengths. A number written with "+" or
// "00" and another country's calling code is refused.
//
// Without "+", one string may read both as <code><national> and as a bare national number that
// happens to start with the calling code's digits. The reading whose national part has a valid
// length wins: for Benin (229; 8 or 10 digits) "22997000000" is +229 97000000, while
// "2290123456" (a 7-digit remainder) is the 10-digit national number +229 2290123456. When
// both readings have a valid length, which no seeded country allows, the calling-code reading
// wins, because merchants and operator APIs usually write MSISDNs as code + national number
// without "+".
func NormalizePhone(c Country, input string) (string, error) {
	if err := checkNumberingPlan(c); err != nil {
		return "", fmt.Errorf("normalize phone: %w", err)
	}
	digits, international, ok := phoneDigits(input)
	if !ok {
		return "", invalidPhone(c)
	}
	// readings lists the candidate national numbers, the preferred one first.
	var readings []string
	if international {
		if rest, ok := strings.CutPrefix(digits, c.CallingCode); ok {
			readings = append(readings, rest)
		}
	} else {
		if rest, ok := strings.CutPrefix(digits, "00"+c.CallingCode); ok {
			readings = append(readings, rest)
		}
		if rest, ok := strings.CutPrefix(digits, c.CallingCode); ok {
			readings = append(readings, rest)
		}
		readings = append(readings, digits)
	}
	for _, national := range readings {
		if validNationalLength(c, national) {
			return "+" + c.CallingCode + national, nil
		}
	}
	return "", invalidPhone(c)
}

// NationalNumber returns the national part of an E.164 number of the country, such as
// "97000000" for "+22997000000" in Benin, or an error with a merchant-safe message when e164
// is not exactly a normalized number of the country.
func NationalNumber(c Country, e164 string) (string, error) {
	if err := checkNumberingPlan(c); err != nil {
		return "", fmt.Errorf("national number: %w", err)
	}
	national, ok := strings.CutPrefix(e164, "+"+c.CallingCode)
	if !ok || !isDigits(national) || !validNationalLength(c, national) {
		return "", invalidPhone(c)
	}
	return national, nil
}

// invalidPhone is the one merchant-safe message for a number that cannot be normalized.
func invalidPhone(c Country) error {
	return fmt.Errorf("Enter a valid phone number for %s.", c.Name)
}

// checkNumberingPlan refuses a country the catalogue left without a calling code or national
// number lengths: a configuration error, not the merchant's.
func checkNumberingPlan(c Country) error {
	if c.CallingCode == "" || !isDigits(c.CallingCode) || len(c.NationalNumberLengths) == 0 {
		return fmt.Errorf("country %s has no valid calling code or national number lengths", c.ISOCode)
	}
	return nil
}

// validNationalLength reports whether national has one of the country's lengths.
func validNationalLength(c Country, national string) bool {
	return slices.Contains(c.NationalNumberLengths, len(national))
}

// phoneDigits strips the separators people type in phone numbers and returns the digits,
// whether the number started with "+", and false when anything else (a letter, a "+" after
// the start, a non-ASCII digit) is in the input or no digit is.
func phoneDigits(input string) (digits string, international, ok bool) {
	var b strings.Builder
	for _, r := range input {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '+' && b.Len() == 0 && !international:
			international = true
		case r == '-' || r == '.' || r == '(' || r == ')' || unicode.IsSpace(r):
		default:
			return "", false, false
		}
	}
	return b.String(), international, b.Len() > 0
}

// isDigits reports whether s is non-empty and made of ASCII digits only.
func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// maskCallingCodes are the dialling prefixes of the catalogue's countries, to mask numbers.
var maskCallingCodes = map[string]string{
	"BJ": "229", "CI": "225", "SN": "221", "TG": "228", "BF": "226", "ML": "223",
	"NE": "227", "GN": "224", "CM": "237", "GA": "241", "CG": "242", "CD": "243",
}

// MaskPhone keeps a number's country code and last three digits: +229*****001, what logs and
// the hosted pages may show of a customer's number. A number of an unknown country keeps the
// ISO code instead: BJ:*****001; one too short to mask is ***.
func MaskPhone(msisdn, country string) string {
	if len(msisdn) < 4 {
		return "***"
	}
	last := msisdn[len(msisdn)-3:]
	if code := maskCallingCodes[country]; code != "" && strings.HasPrefix(msisdn, "+"+code) {
		return "+" + code + strings.Repeat("*", max(len(msisdn)-len(code)-4, 0)) + last
	}
	return country + ":*****" + last
}
