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
	id, err := pathUUID(r, "id", "Merchant balance")
	if err != nil {
		return err
	}
	merchant, env := tenant(r.Context())
	wallet, err := s.store.WalletByID(r.Context(), merchant, env, id)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, wallet)
	return nil
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
	req, err := s.parseCursorPage(r)
	if err != nil {
		return err
	}
	merchant, env := tenant(r.Context())
	items, more, err := s.store.ListLedgerEntries(r.Context(), merchant, env, keysetOf(req))
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, s.newCursorPage(r, req, toAnySlice(items), more, func(v any) Cursor {
		e := v.(sika.LedgerEntry)
		return Cursor{CreatedAt: e.CreatedAt, ID: e.ID}
	}))
	return nil
}

func (s *Server) getLedgerEntry(w http.ResponseWriter, r *http.Request) error {
	id, err := pathUUID(r, "id", "Ledger entry")
	if err != nil {
		return err
	}
	merchant, env := tenant(r.Context())
	e, err := s.store.LedgerEntryByID(r.Context(), merchant, env, id)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, e)
	return nil
}
