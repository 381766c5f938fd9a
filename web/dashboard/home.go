package dashboard

import (
	"net/http"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// latestCount is how many transactions the home page lists.
const latestCount = 10

// homeData is the home page: the wallets of the environment and the latest transactions.
type homeData struct {
	Wallets   []walletRow
	Latest    []sika.Transaction
	Countries map[string]string
	Volume    volumeData
}

// walletRow is a wallet with its country's name.
type walletRow struct {
	sika.Wallet
	CountryName string
}

// home shows the balances per country (available, and pending: held for payouts in flight),
// the volume of the last 30 days with the success rate of collections (money_home.go) and the
// latest transactions, read as GET /merchant-balances/ and GET /transactions/ read them.
func (a *App) home(w http.ResponseWriter, r *http.Request, v *visit) error {
	ctx := r.Context()
	latest, _, err := a.cfg.Store.ListTransactions(ctx, v.merchant.ID, v.env, store.TransactionFilter{}, store.KeysetRequest{Limit: latestCount})
	if err != nil {
		return err
	}
	names, err := a.countryNames(r)
	if err != nil {
		return err
	}
	vol, err := a.volume(r, v)
	if err != nil {
		return err
	}
	wallets, err := a.walletRows(r, v, names)
	if err != nil {
		return err
	}
	d := homeData{Wallets: wallets, Latest: latest, Countries: names, Volume: vol}
	return a.render(w, r, http.StatusOK, "home", &view{visit: v, Title: "home_title", Nav: "home", Data: d})
}

// countryNames maps ISO codes to the catalogue's country names.
func (a *App) countryNames(r *http.Request) (map[string]string, error) {
	countries, err := a.cfg.Store.ListCountries(r.Context())
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(countries))
	for _, c := range countries {
		out[c.ISOCode] = translations.Country(webapp.Lang(r), c.ISOCode, c.Name)
	}
	return out, nil
}
