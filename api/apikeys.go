package api

import (
	"net/http"
	"strings"

	"github.com/sikahq/sika"
)

type createAPIKeyRequest struct {
	Name  string     `json:"name"`
	Scope sika.Scope `json:"scope"`
}

// listAPIKeys lists the keys of the active merchant in the active environment; never the
// secrets, which exist only in the creation response.
func (s *Server) listAPIKeys(w http.ResponseWriter, r *http.Request) error {
	return tenantList(s, w, r, s.store.ListAPIKeys)
}

// createAPIKey creates a key in the dashboard's active environment (X-Environment) and shows
// its secret once.
func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request) error {
	var req createAPIKeyRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	var v sika.Validation
	req.Scope = sika.Scope(strings.ToUpper(string(req.Scope)))
	if req.Scope == "" {
		v.Add("scope", sika.MsgRequired)
	} else if !req.Scope.Valid() {
		v.Add("scope", `Must be one of "PAYIN", "PAYOUT", "BOTH".`)
	}
	if len([]rune(req.Name)) > 100 {
		v.Add("name", "Ensure this field has no more than 100 characters.")
	}
	if err := v.Err(); err != nil {
		return err
	}
	p := principalFrom(r.Context())
	key, err := s.store.CreateAPIKey(r.Context(), p.Merchant.ID, p.Environment, req.Scope, strings.TrimSpace(req.Name), &p.Member.ID)
	if err != nil {
		return err
	}
	writeData(w, http.StatusCreated, key)
	return nil
}

func (s *Server) revokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	id, err := pathUUID(r, "id", "API key")
	if err != nil {
		return err
	}
	merchant, env := tenant(r.Context())
	key, err := s.store.RevokeAPIKey(r.Context(), merchant, env, id)
	if err != nil {
		return err
	}
	writeData(w, http.StatusOK, key)
	return nil
}
