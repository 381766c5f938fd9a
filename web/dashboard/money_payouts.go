package dashboard

import (
	"net/http"
	"sort"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// payoutFields are the payout form's fields: the network (POST /payouts/initialize/'s method;
// its country and currency follow from it), the amount and the recipient.
var payoutFields = []string{"method", "amount", "recipient", "recipient_name", "description"}

// networkChoice is a network a payout or payout method may use, with its country.
type networkChoice struct {
	Code, Label, Country, Currency string
	ID                             uuid.UUID
}

// payoutsData is the payouts page: the wallets, the payout form and the latest payouts.
type payoutsData struct {
	Wallets  []walletRow
	Networks []networkChoice
	Form     *formState
	Latest   []sika.Transaction
}

// payoutConfirmData is the preview of a payout: its price by the API's rule, and the form that
// sends it with the Idempotency-Key made now.
type payoutConfirmData struct {
	Form    *formState
	Network networkChoice
	Fees    sika.Fees
}

// payouts shows the wallets (each with its ledger), the payout form and the latest payouts
// and settlements (RETRAIT transactions).
func (a *App) payouts(w http.ResponseWriter, r *http.Request, v *visit) error {
	return a.payoutsPage(w, r, v, newForm(nil))
}

func (a *App) payoutsPage(w http.ResponseWriter, r *http.Request, v *visit, f *formState) error {
	ctx := r.Context()
	d := payoutsData{Form: f}
	names, err := a.countryNames(r)
	if err != nil {
		return err
	}
	if d.Wallets, err = a.walletRows(r, v, names); err != nil {
		return err
	}
	if d.Networks, err = a.networkChoices(r); err != nil {
		return err
	}
	if d.Latest, _, err = a.cfg.Store.ListTransactions(ctx, v.merchant.ID, v.env, store.TransactionFilter{Type: sika.TypePayout},
		store.KeysetRequest{Limit: latestCount}); err != nil {
		return err
	}
	if f.Val("method") == "" {
		for _, n := range d.Networks {
			if n.Country == v.merchant.Country {
				f.Values["method"] = n.Code
				break
			}
		}
	}
	return a.render(w, r, f.Status, "payouts", &view{visit: v, Title: "payouts_title", Nav: "payouts", Data: d})
}

// previewPayout prices the payout form by the API's rule (Config.QuotePayout) and shows what
// it costs and what leaves the wallet before the merchant confirms; a refused form comes back
// with the API's errors.
func (a *App) previewPayout(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(formValues(r, payoutFields...))
	networks, err := a.networkChoices(r)
	if err != nil {
		return err
	}
	n := findNetwork(networks, f.Val("method"))
	fees, err := a.cfg.QuotePayout(r.Context(), v.merchant.ID, v.env, payoutQuote(f, n))
	if err != nil {
		return f.again(v.Lang, err, func() error { return a.payoutsPage(w, r, v, f) })
	}
	f.IdempotencyKey = newIdempotencyKey()
	return a.render(w, r, http.StatusOK, "payout_confirm", &view{visit: v, Title: "payout_confirm_title", Nav: "payouts",
		Data: payoutConfirmData{Form: f, Network: n, Fees: fees}})
}

// sendPayout sends the confirmed payout by POST /payouts/initialize/ with the preview's
// Idempotency-Key and opens its transaction; "change" goes back to the form as filled.
func (a *App) sendPayout(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(formValues(r, payoutFields...))
	if r.PostFormValue("change") != "" {
		return a.payoutsPage(w, r, v, f)
	}
	networks, err := a.networkChoices(r)
	if err != nil {
		return err
	}
	q := payoutQuote(f, findNetwork(networks, f.Val("method")))
	body := map[string]string{"amount": q.Amount, "currency": q.Currency, "country": q.Country, "method": q.Method,
		"recipient": q.Recipient, "recipient_name": q.RecipientName, "description": q.Description}
	var t sika.Transaction
	if err := a.callMoving(r, v, http.MethodPost, "/payouts/initialize/", body, r.PostFormValue("idempotency_key"), &t); err != nil {
		return f.again(v.Lang, err, func() error { return a.payoutsPage(w, r, v, f) })
	}
	webapp.Redirect(w, r, Prefix+"transactions/"+t.ID.String()+"/")
	return nil
}

// payoutQuote is the payout form as the API reads it: the country and currency are the
// network's.
func payoutQuote(f *formState, n networkChoice) PayoutQuoteRequest {
	return PayoutQuoteRequest{Amount: f.Val("amount"), Currency: n.Currency, Country: n.Country, Method: f.Val("method"),
		Recipient: f.Val("recipient"), RecipientName: f.Val("recipient_name"), Description: f.Val("description")}
}

func findNetwork(networks []networkChoice, code string) networkChoice {
	for _, n := range networks {
		if n.Code == code {
			return n
		}
	}
	return networkChoice{Code: code}
}

// networkChoices are the active networks with their country and currency, by country name.
func (a *App) networkChoices(r *http.Request) ([]networkChoice, error) {
	countries, err := a.cfg.Store.ListCountries(r.Context())
	if err != nil {
		return nil, err
	}
	byID := make(map[uuid.UUID]sika.Country, len(countries))
	for _, c := range countries {
		byID[c.ID] = c
	}
	networks, _, err := a.cfg.Store.ListNetworks(r.Context(), store.PageRequest{Page: 1, PageSize: 500})
	if err != nil {
		return nil, err
	}
	out := make([]networkChoice, 0, len(networks))
	for _, n := range networks {
		c, ok := byID[n.Country]
		if !ok || !n.IsActive {
			continue
		}
		out = append(out, networkChoice{ID: n.ID, Code: n.Code, Label: translations.Country(webapp.Lang(r), c.ISOCode, c.Name) + " · " + n.Name + " (" + n.Code + ")",
			Country: c.ISOCode, Currency: c.DefaultCurrency})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Label < out[j].Label })
	return out, nil
}

// walletRows are the environment's wallets with their countries' names (countryNames).
func (a *App) walletRows(r *http.Request, v *visit, names map[string]string) ([]walletRow, error) {
	wallets, _, err := a.cfg.Store.ListWallets(r.Context(), v.merchant.ID, v.env, store.PageRequest{Page: 1, PageSize: 100})
	if err != nil {
		return nil, err
	}
	out := make([]walletRow, 0, len(wallets))
	for _, wl := range wallets {
		out = append(out, walletRow{Wallet: wl, CountryName: names[wl.Country]})
	}
	return out, nil
}
