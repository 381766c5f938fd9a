package api

import (
	"net/http"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

func (s *Server) listBalances(w http.ResponseWriter, r *http.Request) error {
	return tenantList(s, w, r, s.store.ListWallets)
}

func (s *Server) getBalance(w http.ResponseWriter, r *http.Request) error {
	return writeTenantObject(w, r, "Merchant balance", s.store.WalletByID)
}

// keysetOf turns a decoded cursor into the store's keyset request.
func keysetOf(req cursorPageRequest) store.KeysetRequest {
	k := store.KeysetRequest{Limit: req.PageSize}
	if req.Cursor != nil {
		k.After = &store.KeysetPosition{CreatedAt: req.Cursor.CreatedAt, ID: req.Cursor.ID}
		k.Backward = req.Cursor.Backward
	}
	return k
}

func (s *Server) listLedgerEntries(w http.ResponseWriter, r *http.Request) error {
	return writeCursorList(s, w, r, nil, s.store.ListLedgerEntries,
		func(e sika.LedgerEntry) Cursor { return Cursor{CreatedAt: e.CreatedAt, ID: e.ID} })
}

func (s *Server) getLedgerEntry(w http.ResponseWriter, r *http.Request) error {
	return writeTenantObject(w, r, "Ledger entry", s.store.LedgerEntryByID)
}
