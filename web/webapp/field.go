package webapp

import (
	"html/template"
	"strconv"
	"strings"

	"github.com/sikahq/sika"
)

// Field is one input of a form for the kit's "field" partial: its label, value and error (the
// API's, in the page's language), and how it is typed.
type Field struct {
	// ID is the input's id; its help's and error's ids are ID's with hyphens, and "-help",
	// "-error" ("customer_name" → "customer-name-error").
	ID, Name, Label, Value string
	Error                  template.HTML
	// Type (email, url, tel, number), Mode (inputmode), Auto (autocomplete), Help (a text under
	// the input), Max (maxlength, 0 for none), Rows (a textarea of that many rows, 0 for an
	// input), and the flags.
	Type, Mode, Auto, Help string
	Max, Rows              int
	Required, Optional     bool
	Wide                   bool
	// OptionalText says "(optional)" in the page's language.
	OptionalText string
}

// HelpID and ErrorID are the ids aria-describedby names.
func (f Field) HelpID() string  { return describedID(f.ID, "help") }
func (f Field) ErrorID() string { return describedID(f.ID, "error") }

// Describedby is the input's aria-describedby: its help and its error, when shown.
func (f Field) Describedby() string { return describedby(f.ID, f.Help != "", f.Error != "") }

// describedID is the id of what describes the input of id: its help or its error ("customer_name"
// → "customer-name-error").
func describedID(id, what string) string { return strings.ReplaceAll(id, "_", "-") + "-" + what }

// describedby is the aria-describedby of the input of id: its help and its error, when shown.
func describedby(id string, help, err bool) string {
	var ids []string
	if help {
		ids = append(ids, describedID(id, "help"))
	}
	if err {
		ids = append(ids, describedID(id, "error"))
	}
	return strings.Join(ids, " ")
}

// Field describes an input named name labelled by the text of labelKey, with its value and
// error; opts are words: "required", "optional", "wide", and key=value for type, mode, auto,
// max, rows, id and help (a text key).
func (v *Visit) Field(name, labelKey, value string, errMsg template.HTML, opts ...string) Field {
	f := Field{ID: name, Name: name, Label: v.T(labelKey), Value: value, Error: errMsg, OptionalText: v.T("optional")}
	for _, o := range opts {
		k, val, _ := strings.Cut(o, "=")
		switch k {
		case "required":
			f.Required = true
		case "optional":
			f.Optional = true
		case "wide":
			f.Wide = true
		case "type":
			f.Type = val
		case "mode":
			f.Mode = val
		case "auto":
			f.Auto = val
		case "id":
			f.ID = val
		case "help":
			f.Help = v.T(val)
		case "max":
			f.Max, _ = strconv.Atoi(val)
		case "rows":
			f.Rows, _ = strconv.Atoi(val)
		default:
			panic("webapp: field option " + o)
		}
	}
	return f
}

// Confirm is what the kit's "confirm" partial shows before money moves (a payout, a refund):
// the view V, Name (the prefix of the page's keys and ids: "payout" → payout_confirm_title,
// #confirm-payout), the form's Action and the fields it sends again with its idempotency key.
type Confirm struct {
	V              any
	Name, Action   string
	IdempotencyKey string
	Values         map[string]string
}

// With is what a partial of the kit shows (Data) with the visit that writes it (V).
type With struct {
	V    *Visit
	Data any
}

// With pairs data with the visit, for a partial ("tx-details", "timeline").
func (v *Visit) With(data any) With { return With{V: v, Data: data} }

// TxTable is a table of transactions for the kit's "txtable" partial: the visit V that writes
// it, its Rows, the key of its caption, and what differs between the apps. Each row links to
// the app's transaction page (Prefix + "transactions/<id>/"). A merchant's table (the
// dashboard's) shows each row's customer and network in columns of their own; a table across
// merchants (the console's, AcrossMerchants) says the network and the environment under the
// reference and links each row's merchant (Prefix + "merchants/<id>/").
type TxTable struct {
	V               *Visit
	Rows            []sika.Transaction
	Caption         string
	AcrossMerchants bool
}

// Option is a choice of a select: its value and its text.
type Option struct{ Value, Label string }

// Choice is a select for the kit's "choice" partial: its label, options, the value chosen, the
// text of the empty option that chooses none (All, "" for none), a help under it and its error.
// Its id is ID, or its Name.
type Choice struct {
	Name, ID, Label, All, Value, Help string
	Error                             template.HTML
	Options                           []Option
	Required                          bool
}

// SelectID is the select's id; HelpID and ErrorID are the ids aria-describedby names.
func (c Choice) SelectID() string {
	if c.ID != "" {
		return c.ID
	}
	return c.Name
}
func (c Choice) HelpID() string  { return describedID(c.SelectID(), "help") }
func (c Choice) ErrorID() string { return describedID(c.SelectID(), "error") }

// Describedby is the select's aria-describedby: its help and its error, when shown.
func (c Choice) Describedby() string { return describedby(c.SelectID(), c.Help != "", c.Error != "") }

// Choice describes a select named name labelled by the text of labelKey, with its options, the
// value chosen and its error; words are "required", and key=value for any (the text's key of
// the empty option that chooses none; "-" for a dash), id and help (a text key).
func (v *Visit) Choice(name, labelKey, value string, errMsg template.HTML, opts []Option, words ...string) Choice {
	c := Choice{Name: name, Label: v.T(labelKey), Value: value, Error: errMsg, Options: opts}
	for _, w := range words {
		k, val, _ := strings.Cut(w, "=")
		switch {
		case k == "required":
			c.Required = true
		case k == "any" && val == "-":
			c.All = "—"
		case k == "any":
			c.All = v.T(val)
		case k == "id":
			c.ID = val
		case k == "help":
			c.Help = v.T(val)
		default:
			panic("webapp: choice option " + w)
		}
	}
	return c
}

// Options are the choices of values, each labelled by the text of prefix+value (by the value
// itself when prefix is "").
func (v *Visit) Options(prefix string, values []string) []Option {
	out := make([]Option, len(values))
	for i, val := range values {
		out[i] = Option{Value: val, Label: val}
		if prefix != "" {
			out[i].Label = v.T(prefix + val)
		}
	}
	return out
}
