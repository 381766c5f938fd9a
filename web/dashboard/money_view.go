package dashboard

import (
	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/webapp"
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

// Input is a text input of a form for the kit's "field" partial (webapp.Visit.Field): its value
// as submitted and the API's error about it.
func (v *view) Input(f *formState, name, labelKey string, opts ...string) webapp.Field {
	return v.Field(name, labelKey, f.Val(name), f.Err(name), opts...)
}

// Confirm is the kit's confirmation of a form that moves money (the "confirm" partial).
func (v *view) Confirm(name, action string, f *formState) webapp.Confirm {
	return webapp.Confirm{V: v, Name: name, Action: action, IdempotencyKey: f.IdempotencyKey, Values: f.Values}
}
