package dashboard

import (
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/api/filter"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// listSize is how many transactions a page of the list shows.
const listSize = 25

// filterParams are the query parameters of GET /transactions/ the dashboard's form sets; the
// CSV export link carries them, and nothing else.
var filterParams = []string{"search", "status", "transaction_type", "flow_direction", "country", "network", "currency",
	"created_at__gte", "created_at__lte"}

// transactionsData is the transaction list page.
type transactionsData struct {
	// Form holds the filter values as typed, to fill the form again.
	Form map[string]string
	// Errors maps a parameter to the translation key of its message.
	Errors                          map[string]string
	Rows                            []sika.Transaction
	Next, Previous                  string
	ExportURL                       string
	Filtered                        bool
	Statuses, Types, Directions     []option
	Countries, Networks, Currencies []option
}

// option is a choice of a filter's select.
type option = webapp.Option

// transactions lists the environment's transactions, newest first, filtered and searched by
// the parameters of GET /transactions/ (read by the same code, package api/filter) and paged by
// position. An htmx request from the filter form or a page link gets the results alone.
func (a *App) transactions(w http.ResponseWriter, r *http.Request, v *visit) error {
	ctx := r.Context()
	q := r.URL.Query()
	f, ferr := filter.Transactions(ctx, q, a.cfg.Store)
	req, perr := keysetOf(q)
	d := &transactionsData{Form: map[string]string{}, Errors: map[string]string{}}
	only := url.Values{}
	for _, p := range filterParams {
		if val := strings.TrimSpace(q.Get(p)); val != "" {
			d.Form[p] = val
			only.Set(p, val)
		}
	}
	d.Filtered = len(only) > 0
	if err := filter.JoinValidation(ferr, perr); err != nil {
		var e *sika.Error
		if !errors.As(err, &e) || e.Code != sika.CodeValidation {
			return err
		}
		for field, msgs := range e.Fields {
			d.Errors[field] = errorKey(field, msgs)
		}
	} else {
		rows, more, err := a.cfg.Store.ListTransactions(ctx, v.merchant.ID, v.env, f, req)
		if err != nil {
			return err
		}
		d.Rows = rows
		d.Next, d.Previous = pageLinks(only, req, rows, more)
		d.ExportURL = query(Prefix+"transactions/export/", only)
	}
	vw := &view{visit: v, Title: "transactions_title", Nav: "transactions", Data: d}
	if r.Header.Get("HX-Request") == "true" && r.Header.Get("HX-Target") == "results" &&
		r.Header.Get("HX-History-Restore-Request") == "" {
		return a.renderBlock(w, r, http.StatusOK, "transactions", "results", vw)
	}
	if err := a.fillChoices(r, v, d); err != nil {
		return err
	}
	return a.render(w, r, http.StatusOK, "transactions", vw)
}

// exportTransactions streams the CSV of what the list's filters select, through the API's
// export (GET /transactions/export/) for the session's merchant and environment. A bad filter
// sends the browser back to the list, which says what is wrong.
func (a *App) exportTransactions(w http.ResponseWriter, r *http.Request, v *visit) error {
	err := a.cfg.ExportTransactions(w, r, v.merchant.ID, v.env)
	if sika.ErrorCode(err) == sika.CodeValidation {
		webapp.Redirect(w, r, query(Prefix+"transactions/", r.URL.Query()))
		return nil
	}
	return err
}

// transactionData is the detail page of a transaction.
type transactionData struct {
	sika.TransactionDetail
	CountryName string
	transactionActions
}

// transaction shows one transaction of the merchant and environment with its gateway attempts,
// its status log as a timeline (GET /transactions/{id}/), the webhook deliveries of its events
// and its actions (money_transaction.go); any other id is not found.
func (a *App) transaction(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Transaction")
	if err != nil {
		return err
	}
	d, err := a.cfg.Store.TransactionDetail(r.Context(), v.merchant.ID, v.env, id)
	if err != nil {
		return err
	}
	return a.transactionPage(w, r, v, d, nil)
}

// fillChoices lists the choices of the filter form, labelled in the page's language.
func (a *App) fillChoices(r *http.Request, v *visit, d *transactionsData) error {
	label := func(prefix string, values []string) []option {
		out := make([]option, 0, len(values))
		for _, val := range values {
			out = append(out, option{Value: val, Label: translate(v.Lang, prefix+val)})
		}
		return out
	}
	d.Statuses = label("status_", filter.TransactionStatuses)
	d.Types = label("type_", filter.TransactionTypes)
	d.Directions = label("direction_", filter.FlowDirections)
	countries, err := a.cfg.Store.ListCountries(r.Context())
	if err != nil {
		return err
	}
	currencies := map[string]bool{}
	for _, c := range countries {
		d.Countries = append(d.Countries, option{Value: c.ISOCode, Label: translations.Country(v.Lang, c.ISOCode, c.Name)})
		currencies[c.DefaultCurrency] = true
	}
	for c := range currencies {
		d.Currencies = append(d.Currencies, option{Value: c, Label: c})
	}
	networks, _, err := a.cfg.Store.ListNetworks(r.Context(), store.PageRequest{Page: 1, PageSize: 500})
	if err != nil {
		return err
	}
	for _, n := range networks {
		d.Networks = append(d.Networks, option{Value: n.Code, Label: n.Name + " (" + n.Code + ")"})
	}
	for _, opts := range [][]option{d.Countries, d.Currencies, d.Networks} {
		sort.Slice(opts, func(i, j int) bool { return opts[i].Label < opts[j].Label })
	}
	return nil
}

// errorKey is the translation key of a filter's validation message: the API's messages are
// English sentences for developers; the dashboard says the same in the page's language.
func errorKey(field string, msgs []string) string {
	switch field {
	case "search":
		return "error_search"
	case "created_at__gte", "created_at__lte":
		for _, m := range msgs {
			if strings.HasPrefix(m, "Must not be before") {
				return "error_date_range"
			}
		}
		return "error_date"
	case "after", "before":
		return "error_position"
	}
	return "error_choice"
}

// A page of the list starts after (older rows: the next page) or before (newer rows: the
// previous page) a row's position, written "<created_at in microseconds>.<id>". Positions need
// no signature: whatever position is given, the list reads only the session's own rows.
const (
	afterParam  = "after"
	beforeParam = "before"
)

// keysetOf reads the page's position.
func keysetOf(q url.Values) (store.KeysetRequest, error) {
	req := store.KeysetRequest{Limit: listSize}
	for _, p := range []string{afterParam, beforeParam} {
		raw := q.Get(p)
		if raw == "" {
			continue
		}
		pos, ok := parsePosition(raw)
		if !ok {
			return req, sika.FieldError(p, "Invalid position.")
		}
		req.After, req.Backward = &pos, p == beforeParam
	}
	return req, nil
}

func parsePosition(raw string) (store.KeysetPosition, bool) {
	micros, id, ok := strings.Cut(raw, ".")
	n, err := strconv.ParseInt(micros, 10, 64)
	if !ok || err != nil {
		return store.KeysetPosition{}, false
	}
	u, err := uuid.Parse(id)
	if err != nil {
		return store.KeysetPosition{}, false
	}
	return store.KeysetPosition{CreatedAt: time.UnixMicro(n).UTC(), ID: u}, true
}

func position(t sika.Transaction) string { return keysetPosition(t.CreatedAt, t.ID) }

// keysetPosition writes a row's position ("<created_at in microseconds>.<id>").
func keysetPosition(createdAt time.Time, id uuid.UUID) string {
	return strconv.FormatInt(createdAt.UnixMicro(), 10) + "." + id.String()
}

// pageLinks are the links to the next (older) and previous (newer) pages of a list read with
// req, which returned rows and said whether more lie in its direction.
func pageLinks(filters url.Values, req store.KeysetRequest, rows []sika.Transaction, more bool) (next, previous string) {
	if len(rows) == 0 {
		return "", ""
	}
	link := func(param string, t sika.Transaction) string {
		q := url.Values{}
		for k, v := range filters {
			q[k] = v
		}
		q.Set(param, position(t))
		return query(Prefix+"transactions/", q)
	}
	backward := req.After != nil && req.Backward
	if more || backward {
		next = link(afterParam, rows[len(rows)-1])
	}
	if req.After != nil && (!backward || more) {
		previous = link(beforeParam, rows[0])
	}
	return next, previous
}
