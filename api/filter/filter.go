// Package filter reads the query-string filters of the transaction history (the lists of
// transactions, gateway attempts and status changes, and the CSV export) into store filters,
// with one validation message per invalid parameter. The JSON API (GET /transactions/ and its
// siblings) and the merchant dashboard (web/dashboard) both read their filters here, so that a
// filter means the same thing, and is refused for the same reason, in both.
package filter

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// Bounds of the `search` query parameter. Below three characters a trigram index cannot help
// and a rare pair of letters would scan a merchant's whole history.
const (
	MinSearchLen = 3
	MaxSearchLen = 100
)

// Choices of the enumerated filters, in the order the messages list them.
var (
	TransactionStatuses = []string{string(sika.StatusAwaitingApproval), string(sika.StatusPending), string(sika.StatusSuccess), string(sika.StatusFailed), string(sika.StatusCancelled)}
	TransactionTypes    = []string{string(sika.TypePayment), string(sika.TypeTopUp), string(sika.TypePayout), string(sika.TypeTransfer), string(sika.TypeRefund)}
	FlowDirections      = []string{string(sika.DirectionInbound), string(sika.DirectionOutbound)}
	AttemptStatuses     = []string{string(sika.AttemptPending), string(sika.AttemptSuccess), string(sika.AttemptFailed)}
	StatusTriggers      = []string{string(sika.TriggerSystem), string(sika.TriggerAdmin), string(sika.TriggerClient), string(sika.TriggerWebhookCallback)}
)

// Catalogue tells whether country, network and currency codes are known (store.Store does).
type Catalogue interface {
	CatalogueCodes(ctx context.Context, country, network, currency string) (countryOK, networkOK, currencyOK bool, err error)
}

// query reads filters from a query string, collecting one message per invalid parameter. An
// absent or empty parameter does not filter.
type query struct {
	q    url.Values
	verr sika.Validation
}

// text is the trimmed value of a parameter.
func (f *query) text(name string) string { return strings.TrimSpace(f.q.Get(name)) }

// choice is the upper-cased value of a parameter, which must be one of choices.
func (f *query) choice(name string, choices []string) string {
	v := strings.ToUpper(f.text(name))
	if v == "" {
		return ""
	}
	for _, c := range choices {
		if v == c {
			return v
		}
	}
	f.verr.Add(name, "Select a valid choice: "+strings.Join(choices, ", ")+".")
	return ""
}

// id is a UUID parameter.
func (f *query) id(name string) *uuid.UUID {
	v := f.text(name)
	if v == "" {
		return nil
	}
	id, err := uuid.Parse(v)
	if err != nil {
		f.verr.Add(name, sika.MsgInvalidUUID)
		return nil
	}
	return &id
}

// instant is a date-time parameter: RFC 3339 (`2026-01-31T09:30:00Z`, any offset), or a date
// (`2026-01-31`, UTC) that stands for the start of the day, or for its end when endOfDay (so
// that `created_at__lte=2026-01-31` includes the whole 31st).
func (f *query) instant(name string, endOfDay bool) *time.Time {
	v := f.text(name)
	if v == "" {
		return nil
	}
	// A `+` left unencoded in a query string arrives as a space.
	if len(v) > 10 {
		v = strings.Replace(v, " ", "+", 1)
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		t = t.UTC()
		return &t
	}
	if d, err := time.Parse(time.DateOnly, v); err == nil {
		if endOfDay {
			d = d.AddDate(0, 0, 1).Add(-time.Microsecond)
		}
		return &d
	}
	f.verr.Add(name, "Enter a valid date (2026-01-31) or date-time (2026-01-31T09:30:00Z).")
	return nil
}

// search is the `search` parameter, between MinSearchLen and MaxSearchLen characters.
func (f *query) search(name string) string {
	v := f.text(name)
	switch n := utf8.RuneCountInString(v); {
	case v == "":
	case !utf8.ValidString(v) || strings.ContainsRune(v, 0):
		f.verr.Add(name, "Enter valid text.")
	case n < MinSearchLen:
		f.verr.Add(name, "Ensure this field has at least 3 characters.")
	case n > MaxSearchLen:
		f.verr.Add(name, "Ensure this field has no more than 100 characters.")
	default:
		return v
	}
	return ""
}

// Transactions reads the filters of the transaction list and export: exact `status`,
// `transaction_type`, `flow_direction`, `currency`, `country`, `network`, `merchant`; the
// `created_at__gte` / `created_at__lte` range; `search`; `refunded_transaction` (the refunds of
// one collection). Country, network and currency must be
// known to the catalogue. The error is a validation error naming every bad parameter, or the
// catalogue's failure.
func Transactions(ctx context.Context, values url.Values, cat Catalogue) (store.TransactionFilter, error) {
	q := &query{q: values}
	f := store.TransactionFilter{
		Status:        sika.TransactionStatus(q.choice("status", TransactionStatuses)),
		Type:          sika.TransactionType(q.choice("transaction_type", TransactionTypes)),
		FlowDirection: sika.Direction(q.choice("flow_direction", FlowDirections)),
		Currency:      strings.ToUpper(q.text("currency")),
		Country:       strings.ToUpper(q.text("country")),
		Network:       strings.ToUpper(q.text("network")),
		Merchant:      q.id("merchant"),
		CreatedFrom:   q.instant("created_at__gte", false),
		CreatedTo:     q.instant("created_at__lte", true),
		Search:        q.search("search"),
		Refunded:      q.id("refunded_transaction"),
	}
	if f.CreatedFrom != nil && f.CreatedTo != nil && f.CreatedTo.Before(*f.CreatedFrom) {
		q.verr.Add("created_at__lte", "Must not be before created_at__gte.")
	}
	if f.Country != "" || f.Network != "" || f.Currency != "" {
		countryOK, networkOK, currencyOK, err := cat.CatalogueCodes(ctx, f.Country, f.Network, f.Currency)
		if err != nil {
			return f, err
		}
		if !countryOK {
			q.verr.Add("country", "Unknown country.")
		}
		if !networkOK {
			q.verr.Add("network", "Unknown network.")
		}
		if !currencyOK {
			q.verr.Add("currency", "Unknown currency.")
		}
	}
	return f, q.verr.Err()
}

// Attempts reads the filters of the attempt list: `status`, `gateway`, `transaction`.
func Attempts(values url.Values) (store.AttemptFilter, error) {
	q := &query{q: values}
	f := store.AttemptFilter{
		Status:      sika.AttemptStatus(q.choice("status", AttemptStatuses)),
		Gateway:     q.text("gateway"),
		Transaction: q.id("transaction"),
	}
	return f, q.verr.Err()
}

// StatusLogs reads the filters of the status-log list: `to_status`, `triggered_by`,
// `transaction`.
func StatusLogs(values url.Values) (store.StatusLogFilter, error) {
	q := &query{q: values}
	f := store.StatusLogFilter{
		ToStatus:    sika.TransactionStatus(q.choice("to_status", TransactionStatuses)),
		TriggeredBy: sika.Trigger(q.choice("triggered_by", StatusTriggers)),
		Transaction: q.id("transaction"),
	}
	return f, q.verr.Err()
}

// JoinValidation merges validation errors into one field map, so that a request with a bad
// filter and a bad cursor hears about both; any other error wins as it is.
func JoinValidation(errs ...error) error {
	var v sika.Validation
	for _, err := range errs {
		if err == nil {
			continue
		}
		var e *sika.Error
		if !errors.As(err, &e) || e.Code != sika.CodeValidation {
			return err
		}
		for field, msgs := range e.Fields {
			for _, m := range msgs {
				v.Add(field, m)
			}
		}
	}
	return v.Err()
}
