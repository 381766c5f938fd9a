package dashboard

import (
	"net/http"
	"strings"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// methodRow is a payout method with its network and country, as the pages show it.
type methodRow struct {
	sika.PayoutMethod
	Network networkChoice
}

// settlementsData is the settlements page: the form (to a verified payout method) and the list.
type settlementsData struct {
	Methods     []methodRow
	Settlements []sika.Settlement
	Form        *formState
}

// settlements lists the environment's settlements with the form that sends one.
func (a *App) settlements(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(map[string]string{"payout_method": "", "amount": ""})
	f.IdempotencyKey = newIdempotencyKey()
	return a.settlementsPage(w, r, v, f)
}

func (a *App) settlementsPage(w http.ResponseWriter, r *http.Request, v *visit, f *formState) error {
	methods, err := a.methodRows(r, v)
	if err != nil {
		return err
	}
	list, _, err := a.cfg.Store.ListSettlements(r.Context(), v.merchant.ID, v.env, store.PageRequest{Page: 1, PageSize: moneyListSize})
	if err != nil {
		return err
	}
	return a.render(w, r, f.Status, "settlements", &view{visit: v, Title: "settlements_title", Nav: "payouts",
		Data: settlementsData{Methods: methods, Settlements: list, Form: f}})
}

// createSettlement sends available balance to a payout method by POST /settlements/, with the
// Idempotency-Key of the form, and opens the settlement's transaction. The wallet is the
// method's country's (the API checks it: a method is paid from its country's wallet).
func (a *App) createSettlement(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(formValues(r, "payout_method", "amount"))
	f.IdempotencyKey = r.PostFormValue("idempotency_key")
	methods, err := a.methodRows(r, v)
	if err != nil {
		return err
	}
	body := map[string]string{"amount": f.Val("amount"), "payout_method": f.Val("payout_method")}
	for _, m := range methods {
		if m.ID.String() == f.Val("payout_method") {
			body["country"], body["currency"] = m.Network.Country, m.Network.Currency
		}
	}
	var st sika.Settlement
	if err := a.callMoving(r, v, http.MethodPost, "/settlements/", body, f.IdempotencyKey, &st); err != nil {
		return f.again(v.Lang, err, func() error { return a.settlementsPage(w, r, v, f) })
	}
	webapp.Redirect(w, r, Prefix+"transactions/"+st.Transaction.String()+"/")
	return nil
}

// methodRows are the environment's payout methods with their networks.
func (a *App) methodRows(r *http.Request, v *visit) ([]methodRow, error) {
	methods, _, err := a.cfg.Store.ListPayoutMethods(r.Context(), v.merchant.ID, v.env, store.PageRequest{Page: 1, PageSize: 100})
	if err != nil {
		return nil, err
	}
	networks, err := a.networkChoices(r)
	if err != nil {
		return nil, err
	}
	out := make([]methodRow, 0, len(methods))
	for _, m := range methods {
		row := methodRow{PayoutMethod: m}
		for _, n := range networks {
			if m.Network != nil && n.ID == *m.Network {
				row.Network = n
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// transfersData is the wallet transfers page.
type transfersData struct {
	Wallets   []walletRow
	Countries []option
	Transfers []sika.WalletTransfer
	Form      *formState
}

// walletTransfers lists the transfers between the merchant's wallets with the form that makes
// one.
func (a *App) walletTransfers(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(map[string]string{"from_country": v.merchant.Country, "to_country": "", "amount": ""})
	f.IdempotencyKey = newIdempotencyKey()
	return a.transfersPage(w, r, v, f)
}

func (a *App) transfersPage(w http.ResponseWriter, r *http.Request, v *visit, f *formState) error {
	names, err := a.countryNames(r)
	if err != nil {
		return err
	}
	wallets, err := a.walletRows(r, v, names)
	if err != nil {
		return err
	}
	c, err := a.countryChoices(r)
	if err != nil {
		return err
	}
	list, _, err := a.cfg.Store.ListWalletTransfers(r.Context(), v.merchant.ID, v.env, store.PageRequest{Page: 1, PageSize: moneyListSize})
	if err != nil {
		return err
	}
	return a.render(w, r, f.Status, "wallet_transfers", &view{visit: v, Title: "transfers_title", Nav: "payouts",
		Data: transfersData{Wallets: wallets, Countries: c.Countries, Transfers: list, Form: f}})
}

// createWalletTransfer moves money between two wallets by POST /wallet-transfers/ (at the
// current rate, at once), with the form's Idempotency-Key, and opens its transaction.
func (a *App) createWalletTransfer(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(formValues(r, "from_country", "to_country", "amount"))
	f.IdempotencyKey = r.PostFormValue("idempotency_key")
	var wt sika.WalletTransfer
	if err := a.callMoving(r, v, http.MethodPost, "/wallet-transfers/", f.Values, f.IdempotencyKey, &wt); err != nil {
		return f.again(v.Lang, err, func() error { return a.transfersPage(w, r, v, f) })
	}
	webapp.Redirect(w, r, Prefix+"transactions/"+wt.Transaction.String()+"/")
	return nil
}

// payoutMethodFields are the fields of POST /merchant-payout-methods/.
var payoutMethodFields = []string{"type", "label", "network", "phone_number", "bank_name", "account_holder_name",
	"account_number", "iban", "swift_bic", "bank_code", "branch_code"}

// payoutMethodsData is the payout methods page.
type payoutMethodsData struct {
	Methods  []methodRow
	Networks []networkChoice
	Form     *formState
	Created  bool
}

// NetworkOptions are the networks a mobile money method may be of.
func (d payoutMethodsData) NetworkOptions() []option {
	out := make([]option, len(d.Networks))
	for i, n := range d.Networks {
		out[i] = option{Value: n.Code, Label: n.Label}
	}
	return out
}

// payoutMethods lists the environment's payout methods (a new one waits for Sika's staff to
// verify it in the console) with the form that adds one.
func (a *App) payoutMethods(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(map[string]string{"type": string(sika.PayoutMobileMoney)})
	return a.payoutMethodsPage(w, r, v, f, r.URL.Query().Get("created") == "1")
}

func (a *App) payoutMethodsPage(w http.ResponseWriter, r *http.Request, v *visit, f *formState, created bool) error {
	methods, err := a.methodRows(r, v)
	if err != nil {
		return err
	}
	networks, err := a.networkChoices(r)
	if err != nil {
		return err
	}
	return a.render(w, r, f.Status, "payout_methods", &view{visit: v, Title: "methods_title", Nav: "payouts",
		Data: payoutMethodsData{Methods: methods, Networks: networks, Form: f, Created: created}})
}

// createPayoutMethod records an account of the merchant's by POST /merchant-payout-methods/.
func (a *App) createPayoutMethod(w http.ResponseWriter, r *http.Request, v *visit) error {
	f := newForm(formValues(r, payoutMethodFields...))
	body := map[string]string{}
	for k, val := range f.Values {
		if strings.TrimSpace(val) != "" {
			body[k] = val
		}
	}
	if err := a.call(r, v, http.MethodPost, "/merchant-payout-methods/", nil, body, "", nil); err != nil {
		return f.again(v.Lang, err, func() error { return a.payoutMethodsPage(w, r, v, f, false) })
	}
	webapp.Redirect(w, r, Prefix+"payout-methods/?created=1")
	return nil
}

// ledgerSize is how many entries a page of a wallet's ledger shows.
const ledgerSize = 50

// ledgerData is a wallet's ledger: its entries newest first, each with the available and
// pending balances before and after it.
type ledgerData struct {
	Wallet  walletRow
	Entries []sika.LedgerEntry
	Older   string
	Newest  string
}

// walletLedger shows a wallet's ledger page by page (store.ListWalletLedger); a wallet of
// another merchant or environment is not found.
func (a *App) walletLedger(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Wallet")
	if err != nil {
		return err
	}
	wallet, err := a.cfg.Store.WalletByID(r.Context(), v.merchant.ID, v.env, id)
	if err != nil {
		return err
	}
	req, err := logPage(r, ledgerSize, sika.FieldError(afterParam, "Invalid position."))
	if err != nil {
		return err
	}
	entries, more, err := a.cfg.Store.ListWalletLedger(r.Context(), v.merchant.ID, v.env, wallet.ID, req)
	if err != nil {
		return err
	}
	names, err := a.countryNames(r)
	if err != nil {
		return err
	}
	d := ledgerData{Wallet: walletRow{Wallet: wallet, CountryName: names[wallet.Country]}, Entries: entries}
	d.Newest, d.Older = logLinks(Prefix+"wallets/"+wallet.ID.String()+"/ledger/", req, entries, more, func(e sika.LedgerEntry) string {
		return keysetPosition(e.CreatedAt, e.ID)
	})
	return a.render(w, r, http.StatusOK, "wallet_ledger", &view{visit: v, Title: "ledger_title", Nav: "payouts", Data: d})
}
