package dashboard

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
)

// Dec is an amount held as a plain decimal (a sum, a quote), as Money writes it.
func (v *view) Dec(d decimal.Decimal, currency string) string {
	return formatMoney(d, currency, v.lang)
}

// MoneyPtr is Money for an optional amount ("—" when absent).
func (v *view) MoneyPtr(a *sika.Amount, currency string) string {
	if a == nil {
		return "—"
	}
	return formatMoney(a.Decimal, currency, v.lang)
}

// Day is a UTC date in the page's language ("25/11/2026", "25 Nov 2026").
func (v *view) Day(t time.Time) string {
	if v.lang == "en" {
		return t.UTC().Format("2 Jan 2006")
	}
	return t.UTC().Format("02/01/2006")
}

// CheckoutClass is the CSS class of a checkout session's status badge.
func (v *view) CheckoutClass(status sika.CheckoutStatus) string {
	switch status {
	case sika.CheckoutPaid:
		return "badge ok"
	case sika.CheckoutExpired, sika.CheckoutCancelled:
		return "badge ko"
	}
	return "badge wait"
}

// Signed is a ledger entry's amount with its sign: + for a credit, − for a debit.
func (v *view) Signed(e sika.LedgerEntry) string {
	if e.Direction == sika.Debit {
		return formatMoney(e.Amount.Neg(), e.Currency, v.lang)
	}
	return formatMoney(e.Amount.Decimal, e.Currency, v.lang)
}

// Deref is an optional string's value ("" when absent).
func (v *view) Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
