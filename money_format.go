package sika

import (
	"strings"

	"github.com/shopspring/decimal"
)

// MoneySpace is the space FormatMoney writes between digit groups (French) and between the
// number and the currency (both languages): a no-break space, U+00A0, so that an amount never
// wraps across lines. French typography prefers the narrower U+202F for digit groups; U+00A0
// was chosen because it is in every font a customer's phone may fall back to and in the cp1252
// code page of the PDF invoice's core fonts, where U+202F is not, so that every screen and
// document can show the same string.
const MoneySpace = "\u00a0"

// FormatMoney writes an amount as people in the region read it. It is the one function that
// shows money to people (hosted pages, dashboard, console); the API's JSON keeps FormatAmount.
//
// The amount is rounded HALF-UP to the currency's ISO 4217 minor unit (MinorUnits: none for
// XOF, XAF and GNF, two for CDF, EUR, USD and any other currency), for display only (the
// amounts it is given are already in minor units; ConvertAmount rounds down); a negative amount (a ledger debit) is rounded like its positive counterpart
// and written with a leading "-", and an amount that rounds to zero has no sign.
//
// lang is French unless it is English ("en", "en-US"…):
//
//	French:  "2 500 FCFA" (XOF, XAF), "2 500 GNF", "1 234,50 CDF", "1 234,50 €", "1 234,50 USD",
//	         "-2 500 FCFA"
//	English: "XOF 2,500", "XAF 2,500", "GNF 2,500", "CDF 1,234.50", "EUR 1,234.50",
//	         "USD 1,234.50", "-XOF 2,500"
//
// where every space is MoneySpace. The currency is written as CurrencyLabel writes it.
func FormatMoney(amount decimal.Decimal, currency, lang string) string {
	currency = strings.ToUpper(strings.TrimSpace(currency))
	units := MinorUnits(currency)
	magnitude := amount.Abs().Round(units) // half away from zero on a magnitude: half-up
	whole, frac, _ := strings.Cut(magnitude.StringFixed(units), ".")
	english := isEnglish(lang)
	groupSep, decimalSep := MoneySpace, ","
	if english {
		groupSep, decimalSep = ",", "."
	}
	var b strings.Builder
	if amount.IsNegative() && !magnitude.IsZero() {
		b.WriteByte('-')
	}
	label := CurrencyLabel(currency, lang)
	if english && label != "" {
		b.WriteString(label + MoneySpace)
	}
	for i := 0; i < len(whole); i++ {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteString(groupSep)
		}
		b.WriteByte(whole[i])
	}
	if frac != "" {
		b.WriteString(decimalSep + frac)
	}
	if !english && label != "" {
		b.WriteString(MoneySpace + label)
	}
	return b.String()
}

// CurrencyLabel is how FormatMoney names a currency in lang: in French "FCFA" for the CFA francs
// (XOF and XAF) and "€" for the euro; the ISO 4217 code otherwise, and always in English (the
// code is unambiguous where the CFA franc, the Guinean and the Congolese franc all are "francs"
// and "$" may be any dollar).
func CurrencyLabel(currency, lang string) string {
	currency = strings.ToUpper(strings.TrimSpace(currency))
	if isEnglish(lang) {
		return currency
	}
	switch currency {
	case "XOF", "XAF":
		return "FCFA"
	case "EUR":
		return "€"
	}
	return currency
}

// isEnglish tells whether a language tag ("en", "en-GB", "EN_us") is English; anything else is
// read as French, the pages' default.
func isEnglish(lang string) bool {
	primary, _, _ := strings.Cut(strings.ReplaceAll(strings.TrimSpace(lang), "_", "-"), "-")
	return strings.EqualFold(primary, "en")
}
