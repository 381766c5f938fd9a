package webapp

import (
	"html/template"
	"strconv"
	"strings"
)

// Field is one input of a form for the kit's "field" partial: its label, value and error (the
// API's, in the page's language), and how it is typed.
type Field struct {
	// ID is the input's id; its help's and error's ids are ID's with hyphens, and "-help",
	// "-error" ("customer_name" → "customer-name-error").
	ID, Name, Label, Value string
	Error                  template.HTML
	// Type (email, url, tel, number), Mode (inputmode), Auto (autocomplete), Help (a text under
	// the input), Max (maxlength, 0 for none), and the flags.
	Type, Mode, Auto, Help string
	Max                    int
	Required, Optional     bool
	Wide                   bool
	// OptionalText says "(optional)" in the page's language.
	OptionalText string
}

// HelpID and ErrorID are the ids aria-describedby names.
func (f Field) HelpID() string  { return strings.ReplaceAll(f.ID, "_", "-") + "-help" }
func (f Field) ErrorID() string { return strings.ReplaceAll(f.ID, "_", "-") + "-error" }

// Describedby is the input's aria-describedby: its help and its error, when shown.
func (f Field) Describedby() string {
	var ids []string
	if f.Help != "" {
		ids = append(ids, f.HelpID())
	}
	if f.Error != "" {
		ids = append(ids, f.ErrorID())
	}
	return strings.Join(ids, " ")
}

// Field describes an input named name labelled by the text of labelKey, with its value and
// error; opts are words: "required", "optional", "wide", and key=value for type, mode, auto,
// max, id and help (a text key).
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

// Option is a choice of a select: its value and its text.
type Option struct{ Value, Label string }

// Choice is a select for the kit's "choice" partial: its label, options, the value chosen, the
// text of the empty option that chooses none (All, "" for none) and its error.
type Choice struct {
	Name, Label, All, Value string
	Error                   template.HTML
	Options                 []Option
}

// ErrorID is the id of the choice's error (aria-describedby).
func (c Choice) ErrorID() string { return strings.ReplaceAll(c.Name, "_", "-") + "-error" }
