package sika

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/nyaruka/phonenumbers"
)

// NormalizePhone returns the E.164 form (+<calling code><national number>) of a phone number of the
// country, or an error with a merchant-safe message.
//
// The numbering plans are libphonenumber's (github.com/nyaruka/phonenumbers): the number may be
// written +<code><national>, 00<code><national>, <code><national> or in the country's national
// form; spaces, dashes, dots and parentheses are ignored, and anything else (a letter, an
// extension, a "+" after the start, a non-ASCII digit) refuses it. A number of another country
// is refused. The number must be a valid number of the country's plan, or have one of the
// catalogue's national lengths (Country.NationalNumberLengths): the lengths of numbers still
// in use that the plan no longer lists, such as Benin's 8-digit numbers before its 10-digit
// plan, which the sandbox's numbers keep.
func NormalizePhone(c Country, input string) (string, error) {
	code := phonenumbers.GetCountryCodeForRegion(c.ISOCode)
	if code == 0 {
		return "", fmt.Errorf("normalize phone: country %s is not in the numbering plans", c.ISOCode)
	}
	num, ok := parsePhone(input, c.ISOCode)
	if !ok || int(num.GetCountryCode()) != code || !inPlan(c, num) {
		return "", invalidPhone(c)
	}
	return phonenumbers.Format(num, phonenumbers.E164), nil
}

// NationalNumber returns the national part of an E.164 number of the country, such as
// "97000000" for "+22997000000" in Benin, or an error with a merchant-safe message when e164
// is not exactly a normalized number of the country.
func NationalNumber(c Country, e164 string) (string, error) {
	code := phonenumbers.GetCountryCodeForRegion(c.ISOCode)
	if code == 0 {
		return "", fmt.Errorf("national number: country %s is not in the numbering plans", c.ISOCode)
	}
	if !strings.HasPrefix(e164, "+") || !isDigits(e164[1:]) {
		return "", invalidPhone(c)
	}
	num, ok := parsePhone(e164, c.ISOCode)
	if !ok || int(num.GetCountryCode()) != code || !inPlan(c, num) || phonenumbers.Format(num, phonenumbers.E164) != e164 {
		return "", invalidPhone(c)
	}
	return phonenumbers.GetNationalSignificantNumber(num), nil
}

// invalidPhone is the one merchant-safe message for a number that cannot be normalized.
func invalidPhone(c Country) error {
	return fmt.Errorf("Enter a valid phone number for %s.", c.Name)
}

// parsePhone reads a number as people type it (phoneDigits), in the national form of region
// (ISO code) unless it starts with "+" or "00" and a calling code. Without a region, only the
// international forms read.
func parsePhone(input, region string) (*phonenumbers.PhoneNumber, bool) {
	digits, international, ok := phoneDigits(input)
	if !ok {
		return nil, false
	}
	if rest, isIDD := strings.CutPrefix(digits, "00"); !international && isIDD {
		digits, international = rest, true
	}
	if international && strings.HasPrefix(digits, "0") {
		return nil, false // no calling code starts with 0
	}
	if international {
		digits = "+" + digits
	} else if region == "" {
		return nil, false
	}
	num, err := phonenumbers.Parse(digits, region)
	if err != nil || num.GetExtension() != "" {
		return nil, false
	}
	return num, true
}

// inPlan reports whether a parsed number is a number of the country: valid in its numbering
// plan, or of one of the catalogue's national lengths.
func inPlan(c Country, num *phonenumbers.PhoneNumber) bool {
	if phonenumbers.IsValidNumberForRegion(num, c.ISOCode) {
		return true
	}
	return slices.Contains(c.NationalNumberLengths, len(phonenumbers.GetNationalSignificantNumber(num)))
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

// PhoneLike reports whether input can be a phone number of some country, as people type it
// (phoneDigits): 6 to 15 digits, at most a leading "+" and separators. It checks a number whose
// country is not known yet (a checkout session without country, read in the country the
// customer picks); NormalizePhone checks it once the country is.
func PhoneLike(input string) bool {
	digits, _, ok := phoneDigits(input)
	return ok && len(digits) >= 6 && len(digits) <= 15
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

// MaskPhone keeps a number's country code and last three digits: +229*****001, what logs and
// the hosted pages may show of a customer's number. A number that does not start with its
// country's calling code (libphonenumber's) keeps the ISO code instead: BJ:*****001; one too
// short to mask is ***.
func MaskPhone(msisdn, country string) string {
	if len(msisdn) < 4 {
		return "***"
	}
	last := msisdn[len(msisdn)-3:]
	if code := phonenumbers.GetCountryCodeForRegion(country); code != 0 {
		if cc := strconv.Itoa(code); strings.HasPrefix(msisdn, "+"+cc) {
			return "+" + cc + strings.Repeat("*", max(len(msisdn)-len(cc)-4, 0)) + last
		}
	}
	return country + ":*****" + last
}
