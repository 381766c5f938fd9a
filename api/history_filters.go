package api

import (
	"net/http"

	"github.com/sikahq/sika/api/filter"
	"github.com/sikahq/sika/store"
)

// The filters of the history lists are read by package filter, which the merchant dashboard
// shares: a filter means the same in both.

// transactionFilter reads the filters of the transaction list and export (filter.Transactions).
func (s *Server) transactionFilter(r *http.Request) (store.TransactionFilter, error) {
	return filter.Transactions(r.Context(), r.URL.Query(), s.store)
}

// attemptFilter reads the filters of the attempt list (filter.Attempts).
func attemptFilter(r *http.Request) (store.AttemptFilter, error) {
	return filter.Attempts(r.URL.Query())
}

// statusLogFilter reads the filters of the status-log list (filter.StatusLogs).
func statusLogFilter(r *http.Request) (store.StatusLogFilter, error) {
	return filter.StatusLogs(r.URL.Query())
}

// joinValidation merges validation errors into one field map (filter.JoinValidation).
func joinValidation(errs ...error) error { return filter.JoinValidation(errs...) }
