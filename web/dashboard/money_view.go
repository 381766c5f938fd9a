package dashboard

import (
	"github.com/sikahq/sika"
	"github.com/sikahq/sika/web/webapp"
)

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

// copyBox is what the "copy" partial shows: a read-only address (its input's ID, hidden Label
// and Value), the id of the line that says it was copied (Status), and the button's id (Button:
// "" for a button in a list, drawn secondary).
type copyBox struct {
	V                                *view
	ID, Label, Value, Status, Button string
}

// CopyBox is an address with a copy button (the "copy" partial).
func (v *view) CopyBox(id, label, value, status, button string) copyBox {
	return copyBox{V: v, ID: id, Label: label, Value: value, Status: status, Button: button}
}

// walletCards is what the "wallets" partial shows: the merchant's wallets, in a list of the page
// (ID), each with the link to its ledger when Ledger.
type walletCards struct {
	V       *view
	Wallets []walletRow
	ID      string
	Ledger  bool
}

// WalletCards are the merchant's wallets with their balances (the "wallets" partial).
func (v *view) WalletCards(wallets []walletRow, id string, ledger bool) walletCards {
	return walletCards{V: v, Wallets: wallets, ID: id, Ledger: ledger}
}

// pager is what the "pager" partial shows: a log's newest page and its next ("" for none).
type pager struct {
	V            *view
	Newest, Next string
}

// Pager links a log's newest page and its next (the "pager" partial).
func (v *view) Pager(newest, next string) pager { return pager{V: v, Newest: newest, Next: next} }

// Input is a text input of a form for the kit's "field" partial (webapp.Visit.Field): its value
// as submitted and the API's error about it.
func (v *view) Input(f *formState, name, labelKey string, opts ...string) webapp.Field {
	return v.Field(name, labelKey, f.Val(name), f.Err(name), opts...)
}

// Confirm is the kit's confirmation of a form that moves money (the "confirm" partial).
func (v *view) Confirm(name, action string, f *formState) webapp.Confirm {
	return webapp.Confirm{V: v, Name: name, Action: action, IdempotencyKey: f.IdempotencyKey, Values: f.Values}
}
