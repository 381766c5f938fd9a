package api

import (
	"net/http"
	"strings"

	"github.com/sikahq/sika"
)

type kycReviewRequest struct {
	ReviewNote string `json:"review_note"`
}

// approveKYCDossier approves a PENDING dossier: the merchant becomes VERIFIED and active, so
// its LIVE keys start working.
func (s *Server) approveKYCDossier(w http.ResponseWriter, r *http.Request) error {
	return s.reviewKYCDossier(w, r, sika.KYCDossierApproved)
}

// rejectKYCDossier rejects a PENDING dossier; the merchant stays as it was.
func (s *Server) rejectKYCDossier(w http.ResponseWriter, r *http.Request) error {
	return s.reviewKYCDossier(w, r, sika.KYCDossierRejected)
}

// reviewKYCDossier records a staff decision with its note; 409 not_pending for a dossier that
// was already reviewed.
func (s *Server) reviewKYCDossier(w http.ResponseWriter, r *http.Request, decision sika.KYCDossierStatus) error {
	var req kycReviewRequest
	id, err := idAndBody(r, "KYC dossier", &req)
	if err != nil {
		return err
	}
	note := strings.TrimSpace(req.ReviewNote)
	var v sika.Validation
	maxLength(&v, "review_note", note, 2000)
	if err := v.Err(); err != nil {
		return err
	}
	d, err := s.store.ReviewKYCDossier(r.Context(), id, principalFrom(r.Context()).Member.ID, decision, note)
	return reply(w, http.StatusOK, d, err)
}

// suspendMerchant suspends a merchant: its API keys answer 403 merchant_suspended, and so do
// its money-moving dashboard calls.
func (s *Server) suspendMerchant(w http.ResponseWriter, r *http.Request) error {
	return s.setMerchantSuspended(w, r, true)
}

// unsuspendMerchant lifts a suspension.
func (s *Server) unsuspendMerchant(w http.ResponseWriter, r *http.Request) error {
	return s.setMerchantSuspended(w, r, false)
}

// merchantSuspensionRequest is the optional body of a suspension or its lifting: why, for the
// support log.
type merchantSuspensionRequest struct {
	Reason string `json:"reason"`
}

func (s *Server) setMerchantSuspended(w http.ResponseWriter, r *http.Request, suspended bool) error {
	var req merchantSuspensionRequest
	id, err := idAndBody(r, "Merchant", &req)
	if err != nil {
		return err
	}
	reason := strings.TrimSpace(req.Reason)
	var v sika.Validation
	maxLength(&v, "reason", reason, 2000)
	if err := v.Err(); err != nil {
		return err
	}
	m, err := s.store.SetMerchantSuspended(r.Context(), id, principalFrom(r.Context()).Member.ID, suspended, reason)
	return reply(w, http.StatusOK, m, err)
}
