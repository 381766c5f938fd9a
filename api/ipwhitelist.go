package api

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/sikahq/sika"
)

type addIPRequest struct {
	IPAddress   string `json:"ip_address"`
	Description string `json:"description"`
}

func (s *Server) listIPWhitelist(w http.ResponseWriter, r *http.Request) error {
	return tenantList(s, w, r, s.store.ListIPWhitelist)
}

// parseIPOrPrefix accepts a single address (v4 or v6) or a CIDR range.
func parseIPOrPrefix(s string) (netip.Prefix, bool) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		return p.Masked(), err == nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, false
	}
	a = a.Unmap()
	return netip.PrefixFrom(a, a.BitLen()), true
}

// widestWhitelisted is the shortest prefix length a whitelist entry may have: /8 for IPv4, /32
// (a provider's allocation) for IPv6. A wider range (0.0.0.0/0 at the extreme) would turn the
// payout IP check off in one entry.
func widestWhitelisted(p netip.Prefix) int {
	if p.Addr().Is4() {
		return 8
	}
	return 32
}

func (s *Server) addIPWhitelistEntry(w http.ResponseWriter, r *http.Request, req addIPRequest) error {
	var v sika.Validation
	prefix, ok := parseIPOrPrefix(req.IPAddress)
	switch {
	case strings.TrimSpace(req.IPAddress) == "":
		v.Add("ip_address", sika.MsgRequired)
	case !ok:
		v.Add("ip_address", "Enter a valid IPv4 or IPv6 address or CIDR range.")
	case prefix.Bits() < widestWhitelisted(prefix):
		v.Add("ip_address", fmt.Sprintf("A range wider than /%d lets much of the internet through: list your servers' addresses or their network's range.", widestWhitelisted(prefix)))
	}
	maxLength(&v, "description", req.Description, 200)
	if err := v.Err(); err != nil {
		return err
	}
	merchant, env := tenant(r.Context())
	entry, err := s.store.AddIPWhitelistEntry(r.Context(), merchant, env, prefix, strings.TrimSpace(req.Description))
	return reply(w, http.StatusCreated, entry, err)
}

func (s *Server) deleteIPWhitelistEntry(w http.ResponseWriter, r *http.Request) error {
	return deleteTenantObject(w, r, "IP whitelist entry", s.store.DeleteIPWhitelistEntry)
}
