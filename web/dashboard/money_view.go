package dashboard

import (
	"github.com/sikahq/sika"
)

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
		return v.Dec(e.Amount.Neg(), e.Currency)
	}
	return v.Dec(e.Amount.Decimal, e.Currency)
}

// Deref is an optional string's value ("" when absent).
func (v *view) Deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
