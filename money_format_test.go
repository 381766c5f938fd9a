package sika

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// formatMoneyCases are, per currency, amounts and how each language writes them; "_" stands
// for MoneySpace (U+00A0) to keep the table readable.
var formatMoneyCases = map[string][]struct{ amount, fr, en string }{
	"XOF": {
		{"0", "0_FCFA", "XOF_0"},
		{"0.00", "0_FCFA", "XOF_0"},
		{"999", "999_FCFA", "XOF_999"},
		{"2500", "2_500_FCFA", "XOF_2,500"},
		{"2500.00", "2_500_FCFA", "XOF_2,500"},
		{"100000", "100_000_FCFA", "XOF_100,000"},
		{"1000000000", "1_000_000_000_FCFA", "XOF_1,000,000,000"},
		{"999999999999.99", "1_000_000_000_000_FCFA", "XOF_1,000,000,000,000"},
		{"2500.5", "2_501_FCFA", "XOF_2,501"},
		{"2500.49", "2_500_FCFA", "XOF_2,500"},
		{"-2500", "-2_500_FCFA", "-XOF_2,500"},
		{"-2500.5", "-2_501_FCFA", "-XOF_2,501"},
		{"-0.4", "0_FCFA", "XOF_0"},
	},
	"XAF": {
		{"0", "0_FCFA", "XAF_0"},
		{"2500", "2_500_FCFA", "XAF_2,500"},
		{"1234567.00", "1_234_567_FCFA", "XAF_1,234,567"},
		{"1000000000", "1_000_000_000_FCFA", "XAF_1,000,000,000"},
		{"99.5", "100_FCFA", "XAF_100"},
		{"-15000", "-15_000_FCFA", "-XAF_15,000"},
	},
	"GNF": {
		{"0", "0_GNF", "GNF_0"},
		{"2500", "2_500_GNF", "GNF_2,500"},
		{"20000000", "20_000_000_GNF", "GNF_20,000,000"},
		{"1000000000", "1_000_000_000_GNF", "GNF_1,000,000,000"},
		{"10049.5", "10_050_GNF", "GNF_10,050"},
		{"-1000", "-1_000_GNF", "-GNF_1,000"},
	},
	"CDF": {
		{"0", "0,00_CDF", "CDF_0.00"},
		{"0.05", "0,05_CDF", "CDF_0.05"},
		{"12.5", "12,50_CDF", "CDF_12.50"},
		{"1234.50", "1_234,50_CDF", "CDF_1,234.50"},
		{"123456.78", "123_456,78_CDF", "CDF_123,456.78"},
		{"1000000000", "1_000_000_000,00_CDF", "CDF_1,000,000,000.00"},
		{"1234.505", "1_234,51_CDF", "CDF_1,234.51"},
		{"1234.5049", "1_234,50_CDF", "CDF_1,234.50"},
		{"-1234.5", "-1_234,50_CDF", "-CDF_1,234.50"},
		{"-0.004", "0,00_CDF", "CDF_0.00"},
	},
	"EUR": {
		{"0", "0,00_€", "EUR_0.00"},
		{"1", "1,00_€", "EUR_1.00"},
		{"1234.5", "1_234,50_€", "EUR_1,234.50"},
		{"3.81", "3,81_€", "EUR_3.81"},
		{"1000000000", "1_000_000_000,00_€", "EUR_1,000,000,000.00"},
		{"0.995", "1,00_€", "EUR_1.00"},
		{"-1234.56", "-1_234,56_€", "-EUR_1,234.56"},
	},
	"USD": {
		{"0", "0,00_USD", "USD_0.00"},
		{"1234.50", "1_234,50_USD", "USD_1,234.50"},
		{"999.99", "999,99_USD", "USD_999.99"},
		{"1000000000", "1_000_000_000,00_USD", "USD_1,000,000,000.00"},
		{"19.999", "20,00_USD", "USD_20.00"},
		{"-0.01", "-0,01_USD", "-USD_0.01"},
	},
}

func TestFormatMoney(t *testing.T) {
	for currency, cases := range formatMoneyCases {
		for _, c := range cases {
			d := decimal.RequireFromString(c.amount)
			for lang, want := range map[string]string{"fr": c.fr, "en": c.en} {
				got := FormatMoney(d, currency, lang)
				assert.Equal(t, strings.ReplaceAll(want, "_", MoneySpace), got, "FormatMoney(%s, %s, %s)", c.amount, currency, lang)
				assert.NotContains(t, got, " ", "FormatMoney(%s, %s, %s) may wrap", c.amount, currency, lang)
			}
		}
	}
}

// TestFormatMoneyLanguageAndCurrencySpelling: French unless the tag is English; the currency
// is read whatever its case; an amount without a currency has no label.
func TestFormatMoneyLanguageAndCurrencySpelling(t *testing.T) {
	d := decimal.RequireFromString("2500")
	for _, lang := range []string{"", "fr", "fr-FR", "FR", "wo", "de", "xx-en"} {
		assert.Equal(t, "2\u00a0500\u00a0FCFA", FormatMoney(d, "XOF", lang), "lang %q", lang)
	}
	for _, lang := range []string{"en", "EN", "en-US", "en_GB", " en "} {
		assert.Equal(t, "XOF\u00a02,500", FormatMoney(d, "XOF", lang), "lang %q", lang)
	}
	assert.Equal(t, "2\u00a0500\u00a0FCFA", FormatMoney(d, " xof ", "fr"))
	assert.Equal(t, "2\u00a0500,00\u00a0GHS", FormatMoney(d, "GHS", "fr"), "an unknown currency has two decimals and its code")
	assert.Equal(t, "GHS\u00a02,500.00", FormatMoney(d, "ghs", "en"))
	assert.Equal(t, "2\u00a0500,00", FormatMoney(d, "", "fr"))
	assert.Equal(t, "2,500.00", FormatMoney(d, "", "en"))

	assert.Equal(t, "FCFA", CurrencyLabel("XAF", "fr"))
	assert.Equal(t, "€", CurrencyLabel("eur", "fr"))
	assert.Equal(t, "CDF", CurrencyLabel("CDF", "fr"))
	assert.Equal(t, "XOF", CurrencyLabel("XOF", "en"))
}

// TestFormatMoneyFormatAmountUnchanged: the API's JSON amounts keep two decimals.
func TestFormatMoneyFormatAmountUnchanged(t *testing.T) {
	d := decimal.RequireFromString("2500")
	assert.Equal(t, "2500.00", FormatAmount(d))
	assert.Equal(t, "2\u00a0500\u00a0FCFA", FormatMoney(d, "XOF", "fr"))
}

// TestFormatMoneyCoversTheCatalogue: every currency the migrations seed (countries' default
// currencies, exchange rates, network limits) has its cases above, so that a new country's
// currency is not shown untested.
func TestFormatMoneyCoversTheCatalogue(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("migrations", "*.sql"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	code := regexp.MustCompile(`'([A-Z]{3})'`)
	seen := map[string]bool{}
	for _, f := range files {
		sql, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range code.FindAllStringSubmatch(string(sql), -1) {
			seen[m[1]] = true
		}
	}
	for _, want := range []string{"XOF", "XAF", "GNF", "CDF", "EUR", "USD"} {
		assert.True(t, seen[want], "%s is no longer in the migrations: update this test", want)
	}
	for currency := range seen {
		assert.NotEmpty(t, formatMoneyCases[currency], "%s is seeded by a migration: add its FormatMoney cases (minor unit, both languages)", currency)
	}
}
