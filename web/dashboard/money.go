package dashboard

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// moneyPages are the page templates of payment links, checkout sessions, payouts, settlements,
// wallet transfers, payout methods and wallet ledgers.
var moneyPages = []string{"payment_links", "payment_link", "checkout_sessions",
	"payouts", "payout_confirm", "refund_confirm", "settlements", "wallet_transfers", "payout_methods", "wallet_ledger"}

// moneyRoutes mounts payment links, checkout sessions, payouts, settlements, wallet transfers,
// payout methods and wallet ledgers, and the actions of a transaction's page. Every form that
// changes something acts through the JSON API (a.call); the pages read with the store.
func (a *App) moneyRoutes(r *mux.Router) {
	get, post := http.MethodGet, http.MethodPost
	r.Handle(Prefix+"transactions/{id}/invoice/", a.forMerchant(a.transactionInvoice)).Methods(get)
	r.Handle(Prefix+"transactions/{id}/verify/", a.forMerchant(a.verifyTransaction)).Methods(post)
	r.Handle(Prefix+"transactions/{id}/retry/", a.forMerchant(a.retryTransaction)).Methods(post)
	for _, action := range []string{"approve", "reject"} {
		r.Handle(Prefix+"transactions/{id}/"+action+"/", a.forMerchant(a.decideTransaction(action))).Methods(post)
	}
	r.Handle(Prefix+"transactions/{id}/refund/preview/", a.forMerchant(a.previewRefund)).Methods(post)
	r.Handle(Prefix+"transactions/{id}/refund/", a.forMerchant(a.sendRefund)).Methods(post)

	r.Handle(Prefix+"payment-links/", a.forMerchant(a.paymentLinks)).Methods(get)
	r.Handle(Prefix+"payment-links/", a.forMerchant(a.createPaymentLink)).Methods(post)
	// Before {id}: mux matches in the order routes were added.
	r.Handle(Prefix+"payment-links/new/", a.forMerchant(a.newPaymentLink)).Methods(get)
	r.Handle(Prefix+"payment-links/{id}/", a.forMerchant(a.paymentLink)).Methods(get)
	r.Handle(Prefix+"payment-links/{id}/", a.forMerchant(a.updatePaymentLink)).Methods(post)

	r.Handle(Prefix+"checkout-sessions/", a.forMerchant(a.checkoutSessions)).Methods(get)
	r.Handle(Prefix+"checkout-sessions/", a.forMerchant(a.createCheckoutSession)).Methods(post)
	r.Handle(Prefix+"checkout-sessions/{id}/cancel/", a.forMerchant(a.cancelCheckoutSession)).Methods(post)

	r.Handle(Prefix+"payouts/", a.forMerchant(a.payouts)).Methods(get)
	r.Handle(Prefix+"payouts/", a.forMerchant(a.sendPayout)).Methods(post)
	r.Handle(Prefix+"payouts/preview/", a.forMerchant(a.previewPayout)).Methods(post)
	r.Handle(Prefix+"settlements/", a.forMerchant(a.settlements)).Methods(get)
	r.Handle(Prefix+"settlements/", a.forMerchant(a.createSettlement)).Methods(post)
	r.Handle(Prefix+"wallet-transfers/", a.forMerchant(a.walletTransfers)).Methods(get)
	r.Handle(Prefix+"wallet-transfers/", a.forMerchant(a.createWalletTransfer)).Methods(post)
	r.Handle(Prefix+"payout-methods/", a.forMerchant(a.payoutMethods)).Methods(get)
	r.Handle(Prefix+"payout-methods/", a.forMerchant(a.createPayoutMethod)).Methods(post)
	r.Handle(Prefix+"wallets/{id}/ledger/", a.forMerchant(a.walletLedger)).Methods(get)
}

// moneyStore is what the money pages read; *store.Store is it. Every read takes the tenancy
// (merchant and environment) of the session.
type moneyStore interface {
	DailyVolumes(ctx context.Context, merchantID uuid.UUID, env sika.Environment, since time.Time) ([]store.DailyVolume, error)
	TransactionDeliveries(ctx context.Context, merchantID uuid.UUID, env sika.Environment, transactionID uuid.UUID) ([]store.TransactionDelivery, error)
	WalletByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.Wallet, error)
	ListWalletLedger(ctx context.Context, merchantID uuid.UUID, env sika.Environment, walletID uuid.UUID, req store.KeysetRequest) ([]sika.LedgerEntry, bool, error)
	ListPaymentLinks(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page store.PageRequest) ([]sika.PaymentLink, int, error)
	PaymentLinkByID(ctx context.Context, merchantID uuid.UUID, env sika.Environment, id uuid.UUID) (sika.PaymentLink, error)
	ListLinkTransactions(ctx context.Context, linkID uuid.UUID, page store.PageRequest) ([]sika.Transaction, int, error)
	ListCheckoutSessions(ctx context.Context, merchantID uuid.UUID, env sika.Environment, f store.CheckoutSessionFilter, page store.PageRequest) ([]sika.CheckoutSession, int, error)
	ListPayoutMethods(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page store.PageRequest) ([]sika.PayoutMethod, int, error)
	ListSettlements(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page store.PageRequest) ([]sika.Settlement, int, error)
	ListWalletTransfers(ctx context.Context, merchantID uuid.UUID, env sika.Environment, page store.PageRequest) ([]sika.WalletTransfer, int, error)
}

// PayoutQuoteRequest is the payout form, as Config.QuotePayout prices it (the fields of POST
// /payouts/initialize/).
type PayoutQuoteRequest struct {
	Amount, Currency, Country, Method, Recipient, RecipientName, Description, FeeChargeMode string
}

// moneyListSize is how many rows the money pages list.
const moneyListSize = 50

// newIdempotencyKey is the Idempotency-Key of a form that moves money, made when it is shown.
func newIdempotencyKey() string { return "dash-" + webapp.NewToken() }

// callMoving runs an API call that moves money with the form's Idempotency-Key. A double
// submit sends the key a second time while the first request may still run: the API answers
// idempotency_key_in_use, and the call waits for the first to finish and answers what it
// answered (the API replays it), so the browser shows the one operation either way.
func (a *App) callMoving(r *http.Request, v *visit, method, path string, body any, key string, out any) error {
	var err error
	for wait := 50 * time.Millisecond; ; wait *= 2 {
		err = a.call(r, v, method, path, nil, body, key, out)
		if sika.ErrorCode(err) != sika.CodeIdempotencyKeyInUse || wait > 2*time.Second {
			return err
		}
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return r.Context().Err()
		}
	}
}
