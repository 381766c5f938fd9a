package api

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
)

// routes mounts every route of the service. Each merchant route is listed in the OpenAPI
// document; a test walks this router and the document and fails when either lacks the other.
func (s *Server) routes() *mux.Router {
	root := mux.NewRouter()
	// No redirect to a cleaned path: an empty id (`/networks//`) or a dot segment is a 404 like
	// any unknown path, not a 301 that many clients follow as a GET (contract §1).
	root.SkipClean(true)
	root.NotFoundHandler = s.observe(http.HandlerFunc(s.notFound))
	root.MethodNotAllowedHandler = s.observe(http.HandlerFunc(s.methodNotAllowed))
	root.Use(s.observe)

	root.HandleFunc("/healthz", s.healthz).Methods(http.MethodGet)
	root.HandleFunc("/readyz", s.readyz).Methods(http.MethodGet)
	root.Handle("/metrics", s.metricsHandler()).Methods(http.MethodGet)
	for _, prefix := range []string{"", basePath} {
		root.HandleFunc(prefix+"/openapi.json", s.openAPIDocument).Methods(http.MethodGet)
		root.HandleFunc(prefix+"/docs/", s.docsPage).Methods(http.MethodGet)
	}
	root.Handle("/docs", http.RedirectHandler("/docs/", http.StatusMovedPermanently)).Methods(http.MethodGet)
	root.HandleFunc("/gateway-callbacks/{gateway}/", s.throttledCallback).Methods(http.MethodPost)

	// Merchant routes are mounted on the root router with their full /api/v1 path (a mux
	// subrouter would answer a wrong method with 404 instead of 405).
	member := routeOpts{access: accessMember}
	merchant := routeOpts{access: accessMerchant}
	dashboard := routeOpts{access: accessDashboard}
	keys := routeOpts{access: accessDashboard, perm: sika.PermManageKeys}
	settings := routeOpts{access: accessDashboard, perm: sika.PermChangeSettings}
	approve := routeOpts{access: accessDashboard, perm: sika.PermApprovePayouts}

	// Accounts and sessions.
	s.handle(root, http.MethodPost, "/auth/register/", withBody(s.register), routeOpts{throttleByIP: true})
	s.handle(root, http.MethodPost, "/auth/login/", withBody(s.login), routeOpts{throttleByIP: true})
	s.handle(root, http.MethodGet, "/auth/merchants/", s.listMemberMerchants, member)
	s.handle(root, http.MethodPost, "/auth/merchants/", withBody(s.createMerchant), member)

	// Dashboard-only management of the merchant account.
	s.handle(root, http.MethodGet, "/api-keys/", s.listAPIKeys, dashboard)
	s.handle(root, http.MethodPost, "/api-keys/", withBody(s.createAPIKey), keys)
	s.handle(root, http.MethodPost, "/api-keys/{id}/revoke/", s.revokeAPIKey, keys)
	s.handle(root, http.MethodGet, "/ip-whitelist/", s.listIPWhitelist, dashboard)
	s.handle(root, http.MethodPost, "/ip-whitelist/", withBody(s.addIPWhitelistEntry), keys)
	s.handle(root, http.MethodDelete, "/ip-whitelist/{id}/", s.deleteIPWhitelistEntry, keys)
	s.handle(root, http.MethodGet, "/merchant-settings/", s.getMerchantSettings, dashboard)
	s.handle(root, http.MethodGet, "/team-members/", s.listTeamMembers, dashboard)
	s.handle(root, http.MethodPost, "/team-members/", withBody(s.addTeamMember), settings)
	s.handle(root, http.MethodPatch, "/merchant-settings/", s.patchMerchantSettings, settings)

	// Reference catalogue and pricing.
	s.handle(root, http.MethodGet, "/countries/", s.listCountries, routeOpts{throttleByIP: true})
	s.handle(root, http.MethodGet, "/countries/{id}/", s.getCountry, merchant)
	s.handle(root, http.MethodGet, "/networks/", s.listNetworks, merchant)
	// Before /networks/{id}/, which would take "predict" for an id.
	s.handle(root, http.MethodGet, "/networks/predict/", s.predictNetwork, merchant)
	s.handle(root, http.MethodGet, "/networks/{id}/", s.getNetwork, merchant)
	s.handle(root, http.MethodGet, "/exchange-rates/", s.listExchangeRates, merchant)
	s.handle(root, http.MethodGet, "/pricing/my-rates/", s.myRates, merchant)

	// Collections.
	payin := routeOpts{access: accessMerchant, scope: sika.ScopePayin, idempotent: true, movesMoney: true}
	s.handle(root, http.MethodPost, "/payments/softpay/", s.softpay, payin)
	s.handle(root, http.MethodPost, "/payments/softpay/initialize/", s.softpay, payin)
	s.handle(root, http.MethodPost, "/payments/{id}/confirm-otp/", withBody(s.confirmOTP), payin)
	s.handle(root, http.MethodPost, "/payments/{id}/retry/", withBody(s.retryPayment), payin)
	s.handle(root, http.MethodGet, "/payments/{id}/verify/", s.verifyPayment, routeOpts{access: accessMerchant, scope: sika.ScopePayin})

	// Payouts.
	payout := routeOpts{access: accessMerchant, scope: sika.ScopePayout, idempotent: true, movesMoney: true, whitelistedIP: true, perm: sika.PermSendPayouts}
	s.handle(root, http.MethodPost, "/payouts/initialize/", s.initializePayout, payout)
	s.handle(root, http.MethodGet, "/payouts/{id}/verify/", s.verifyPayout, routeOpts{access: accessMerchant, scope: sika.ScopePayout})

	// Refunds of collections: money leaving the wallet, under the payout's guard.
	s.handle(root, http.MethodPost, "/refunds/", withBody(s.createRefund), payout)
	s.handle(root, http.MethodGet, "/refunds/", s.listRefunds, merchant)
	s.handle(root, http.MethodGet, "/refunds/{id}/", s.getRefund, merchant)

	// Payout batches: up to 1,000 payouts accepted (and held) whole, each then a payout.
	s.handle(root, http.MethodPost, "/payout-batches/", withBody(s.createPayoutBatch), payout)
	s.handle(root, http.MethodGet, "/payout-batches/", s.listPayoutBatches, merchant)
	s.handle(root, http.MethodGet, "/payout-batches/{id}/", s.getPayoutBatch, merchant)
	s.handle(root, http.MethodGet, "/payout-batches/{id}/items/", s.listPayoutBatchItems, merchant)
	s.handle(root, http.MethodGet, "/payout-batches/{id}/results/", s.payoutBatchResults, merchant)
	s.handle(root, http.MethodPost, "/payout-batches/{id}/cancel/", s.cancelPayoutBatch, routeOpts{access: accessMerchant, scope: sika.ScopePayout, perm: sika.PermSendPayouts})
	// A second member's decision on a batch over the merchant's approval threshold (dashboard
	// only: an API key has no member).
	s.handle(root, http.MethodPost, "/payouts/{id}/approve/", s.decidePayout(true), approve)
	s.handle(root, http.MethodPost, "/payouts/{id}/reject/", s.decidePayout(false), approve)
	s.handle(root, http.MethodPost, "/payout-batches/{id}/approve/", s.decidePayoutBatch(true), approve)
	s.handle(root, http.MethodPost, "/payout-batches/{id}/reject/", s.decidePayoutBatch(false), approve)

	// Settlements, wallet transfers and the payout methods settlements go to.
	s.handle(root, http.MethodPost, "/settlements/", withBody(s.createSettlement), payout)
	s.handle(root, http.MethodGet, "/settlements/", s.listSettlements, merchant)
	s.handle(root, http.MethodPost, "/wallet-transfers/", withBody(s.createWalletTransfer), payout)
	s.handle(root, http.MethodGet, "/wallet-transfers/", s.listWalletTransfers, merchant)
	s.handle(root, http.MethodPost, "/merchant-payout-methods/", withBody(s.createPayoutMethod), settings)
	s.handle(root, http.MethodGet, "/merchant-payout-methods/", s.listPayoutMethods, merchant)
	s.handle(root, http.MethodGet, "/merchant-payout-methods/{id}/", s.getPayoutMethod, merchant)
	s.handle(root, http.MethodPatch, "/admin/merchant-payout-methods/{id}/", requireStaff(sika.PermVerifyPayoutMethod, withBody(s.reviewPayoutMethod)), routeOpts{access: accessStaff})

	// Webhook endpoints and the event log.
	s.handle(root, http.MethodGet, "/merchant-webhooks/", s.listWebhooks, merchant)
	s.handle(root, http.MethodPost, "/merchant-webhooks/", withBody(s.createWebhook), keys)
	s.handle(root, http.MethodGet, "/merchant-webhooks/{id}/", s.getWebhook, merchant)
	s.handle(root, http.MethodPatch, "/merchant-webhooks/{id}/", s.patchWebhook, keys)
	s.handle(root, http.MethodDelete, "/merchant-webhooks/{id}/", s.deleteWebhook, keys)
	s.handle(root, http.MethodPost, "/merchant-webhooks/{id}/rotate-secret/", s.rotateWebhookSecret, keys)
	s.handle(root, http.MethodGet, "/events/", s.listEvents, merchant)
	// The live streams of `sika listen` and `sika logs tail` (before /events/{id}/, which would
	// take "stream" for an id).
	s.handle(root, http.MethodGet, "/events/stream/", s.streamEvents, merchant)
	s.handle(root, http.MethodGet, "/request-logs/stream/", s.streamRequestLogs, merchant)
	s.handle(root, http.MethodGet, "/events/{id}/", s.getEvent, merchant)
	s.handle(root, http.MethodGet, "/events/{id}/deliveries/", s.listEventDeliveries, merchant)
	s.handle(root, http.MethodPost, "/events/{id}/redeliver/", withBody(s.redeliverEvent), merchant)

	// Support tooling (staff).
	staff := routeOpts{access: accessStaff}
	s.handle(root, http.MethodGet, "/admin/transactions/stuck/", s.listStuckTransactions, staff)
	s.handle(root, http.MethodPost, "/admin/transactions/{id}/reverify/", requireStaff(sika.PermReverify, s.reverifyTransaction), staff)
	// Two people per money decision: one proposes (resolve/), another approves or rejects.
	s.handle(root, http.MethodPost, "/admin/transactions/{id}/resolve/", requireStaff(sika.PermProposeMoneyDecision, s.resolveTransaction), staff)
	s.handle(root, http.MethodGet, "/admin/money-decisions/", s.listMoneyDecisions, staff)
	s.handle(root, http.MethodPost, "/admin/money-decisions/{id}/approve/", requireStaff(sika.PermApproveMoneyDecision, s.approveMoneyDecision), staff)
	s.handle(root, http.MethodPost, "/admin/money-decisions/{id}/reject/", requireStaff(sika.PermApproveMoneyDecision, s.rejectMoneyDecision), staff)
	s.handle(root, http.MethodGet, "/admin/transactions/{id}/staff-actions/", s.listStaffActions, staff)
	s.handle(root, http.MethodGet, "/admin/payouts/unclear/", s.listUnclearPayouts, staff)
	s.handle(root, http.MethodGet, "/admin/money-flags/", s.listMoneyFlags, staff)
	// A flag's money is decided by two people too: its refund, or a re-held payout's end.
	s.handle(root, http.MethodPost, "/admin/money-flags/{id}/refund/", requireStaff(sika.PermProposeMoneyDecision, s.proposeFlagRefund), staff)
	s.handle(root, http.MethodPost, "/admin/money-flags/{id}/settle/", requireStaff(sika.PermProposeMoneyDecision, s.proposeReheldPayout), staff)
	s.handle(root, http.MethodGet, "/admin/merchant-kyc/", s.listKYCQueue, staff)

	// Transactions and wallets (read-only).
	s.historyRoutes(root)
	s.handle(root, http.MethodGet, "/transactions/{id}/", s.getTransaction, merchant)
	s.handle(root, http.MethodGet, "/merchant-balances/", s.listBalances, merchant)
	s.handle(root, http.MethodGet, "/merchant-balances/{id}/", s.getBalance, merchant)
	s.handle(root, http.MethodGet, "/merchant-ledger-entries/", s.listLedgerEntries, merchant)
	s.handle(root, http.MethodGet, "/merchant-ledger-entries/{id}/", s.getLedgerEntry, merchant)

	s.kycRoutes(root)
	s.checkoutRoutes(root)
	s.dashboardRoutes(root)
	s.consoleRoutes(root)
	return root
}
