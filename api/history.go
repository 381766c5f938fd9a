package api

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

// historyRoutes mounts the transaction history: the filtered cursor lists of transactions,
// gateway attempts and status changes with their details, the CSV export and the PDF invoice.
// Any key scope may read them.
//
// routes() calls it before it mounts GET /transactions/{id}/: gorilla/mux matches routes in
// the order they were added and {id} matches any segment, so /transactions/export/ must come
// first (TestHistoryRoutesOrder fails otherwise).
func (s *Server) historyRoutes(root *mux.Router) {
	merchant := routeOpts{access: accessMerchant}
	s.handle(root, http.MethodGet, "/transactions/", s.listTransactions, merchant)
	s.handle(root, http.MethodGet, "/transactions/export/", s.exportTransactions, merchant)
	s.handle(root, http.MethodGet, "/transactions/{id}/invoice/", s.transactionInvoice, merchant)
	s.handle(root, http.MethodGet, "/transaction-attempts/", s.listAttempts, merchant)
	s.handle(root, http.MethodGet, "/transaction-attempts/{id}/", s.getAttempt, merchant)
	s.handle(root, http.MethodGet, "/transaction-status-logs/", s.listStatusLogs, merchant)
	s.handle(root, http.MethodGet, "/transaction-status-logs/{id}/", s.getStatusLog, merchant)
}

func (s *Server) listTransactions(w http.ResponseWriter, r *http.Request) error {
	return s.writeTransactionList(w, r, s.store.ListTransactions)
}

// writeTransactionList answers a cursor list of the caller's transactions that list reads with
// the history's filters (transactionFilter): the transactions, or the refunds.
func (s *Server) writeTransactionList(w http.ResponseWriter, r *http.Request,
	list func(context.Context, uuid.UUID, sika.Environment, store.TransactionFilter, store.KeysetRequest) ([]sika.Transaction, bool, error)) error {
	f, err := s.transactionFilter(r)
	return writeCursorList(s, w, r, err, func(ctx context.Context, merchant uuid.UUID, env sika.Environment, req store.KeysetRequest) ([]sika.Transaction, bool, error) {
		return list(ctx, merchant, env, f, req)
	}, func(t sika.Transaction) Cursor { return Cursor{CreatedAt: t.CreatedAt, ID: t.ID} })
}

func (s *Server) listAttempts(w http.ResponseWriter, r *http.Request) error {
	f, err := attemptFilter(r)
	return writeCursorList(s, w, r, err, func(ctx context.Context, merchant uuid.UUID, env sika.Environment, req store.KeysetRequest) ([]sika.TransactionAttempt, bool, error) {
		return s.store.ListAttempts(ctx, merchant, env, f, req)
	}, func(a sika.TransactionAttempt) Cursor { return Cursor{CreatedAt: a.CreatedAt, ID: a.ID} })
}

func (s *Server) listStatusLogs(w http.ResponseWriter, r *http.Request) error {
	f, err := statusLogFilter(r)
	return writeCursorList(s, w, r, err, func(ctx context.Context, merchant uuid.UUID, env sika.Environment, req store.KeysetRequest) ([]sika.TransactionStatusLog, bool, error) {
		return s.store.ListStatusLogs(ctx, merchant, env, f, req)
	}, func(l sika.TransactionStatusLog) Cursor { return Cursor{CreatedAt: l.CreatedAt, ID: l.ID} })
}

func (s *Server) getAttempt(w http.ResponseWriter, r *http.Request) error {
	return writeTenantObject(w, r, "Transaction attempt", s.store.AttemptByID)
}

func (s *Server) getStatusLog(w http.ResponseWriter, r *http.Request) error {
	return writeTenantObject(w, r, "Transaction status log", s.store.StatusLogByID)
}
