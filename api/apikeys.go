package api

import (
	"net/http"
	"strings"

	"github.com/sikahq/sika"
)

type createAPIKeyRequest struct {
	Name        string     `json:"name"`
	Scope       sika.Scope `json:"scope"`
	Environment *string    `json:"environment"`
}

// listAPIKeys lists the keys of the active merchant in the active environment; never the
// secrets, which exist only in the creation response.
func (s *Server) listAPIKeys(w http.ResponseWriter, r *http.Request) error {
	return tenantList(s, w, r, s.store.ListAPIKeys)
}

// createAPIKey creates a key and shows its secret once. The key's environment is the body's
// `environment` when sent, else the session's (X-Environment, default LIVE); a body
// `environment` that differs from an X-Environment header the request also sends is refused:
// a merchant who asks for a TEST key is never handed a LIVE one. A dashboard session may
// create keys in either environment, so honouring the body gives it nothing it could not ask
// for with the header.
func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request, req createAPIKeyRequest) error {
	var v sika.Validation
	req.Scope = sika.Scope(strings.ToUpper(string(req.Scope)))
	if req.Scope == "" {
		v.Add("scope", sika.MsgRequired)
	} else if !req.Scope.Valid() {
		v.Add("scope", `Must be one of "PAYIN", "PAYOUT", "BOTH".`)
	}
	maxLength(&v, "name", req.Name, 100)
	p := principalFrom(r.Context())
	env := p.Environment
	if req.Environment != nil {
		asked := sika.Environment(strings.ToUpper(strings.TrimSpace(*req.Environment)))
		switch {
		case !asked.Valid():
			v.Add("environment", `Must be "TEST" or "LIVE".`)
		case r.Header.Get("X-Environment") != "" && asked != p.Environment:
			v.Add("environment", "Conflicts with the X-Environment header ("+string(p.Environment)+
				"): send the same environment in both, or only one of them.")
		default:
			env = asked
		}
	}
	if err := v.Err(); err != nil {
		return err
	}
	key, err := s.store.CreateAPIKey(r.Context(), p.Merchant.ID, env, req.Scope, strings.TrimSpace(req.Name), &p.Member.ID)
	return reply(w, http.StatusCreated, key, err)
}

func (s *Server) revokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	return tenantAction(w, r, "API key", s.store.RevokeAPIKey, nil)
}
