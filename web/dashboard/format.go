package dashboard

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/webapp"
)

// formatMoney is the one place the dashboard turns an amount into text: sika.FormatMoney, the
// formatting of every page and document ("2 500 FCFA" in French, "XOF 2,500" in English).
func formatMoney(amount decimal.Decimal, currency, lang string) string {
	return sika.FormatMoney(amount, currency, lang)
}

// formatTime is a date and time in UTC: "25/11/2026 08:06 UTC" in French, "25 Nov 2026 08:06
// UTC" in English.
func formatTime(t time.Time, lang string) string { return webapp.FormatTime(t, lang) }
