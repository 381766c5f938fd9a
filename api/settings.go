package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
)

func (s *Server) getMerchantSettings(w http.ResponseWriter, r *http.Request) error {
	merchant, env := tenant(r.Context())
	st, err := s.store.MerchantSettings(r.Context(), merchant, env)
	return reply(w, http.StatusOK, st, err)
}

type settingsPatchRequest struct {
	FeeChargeMode           json.RawMessage `json:"fee_charge_mode"`
	AllowClientOverride     *bool           `json:"allow_client_override"`
	PayoutApprovalThreshold json.RawMessage `json:"payout_approval_threshold"`
	ApprovalWindowHours     *int            `json:"approval_window_hours"`
}

func (s *Server) patchMerchantSettings(w http.ResponseWriter, r *http.Request) error {
	merchant, env := tenant(r.Context())
	current, err := s.store.MerchantSettings(r.Context(), merchant, env)
	if err != nil {
		return err
	}
	var req settingsPatchRequest
	if _, err := decodeUpdateBody(r, &req, current); err != nil {
		return err
	}
	var v sika.Validation
	var patch store.SettingsPatch
	if req.FeeChargeMode != nil {
		var mode string
		if err := json.Unmarshal(req.FeeChargeMode, &mode); err != nil || !sika.FeeChargeMode(strings.ToUpper(mode)).Valid() {
			v.Add("fee_charge_mode", `Must be "ADD_ON" or "DEDUCTED".`)
		} else {
			m := sika.FeeChargeMode(strings.ToUpper(mode))
			patch.FeeChargeMode = &m
		}
	}
	patch.AllowClientOverride = req.AllowClientOverride
	if req.PayoutApprovalThreshold != nil {
		var raw *string
		if err := json.Unmarshal(req.PayoutApprovalThreshold, &raw); err != nil {
			v.Add("payout_approval_threshold", "Must be a decimal string or null.")
		} else if raw == nil {
			patch.ClearApprovalThreshold = true
		} else if d, err := decimal.NewFromString(strings.TrimSpace(*raw)); err != nil || !d.IsPositive() || d.Exponent() < -2 {
			v.Add("payout_approval_threshold", "Must be an amount greater than zero with at most two decimals, or null.")
		} else {
			patch.PayoutApprovalThreshold = &d
		}
	}
	if req.ApprovalWindowHours != nil {
		if h := *req.ApprovalWindowHours; h < 1 || h > 168 {
			v.Add("approval_window_hours", "Must be between 1 and 168.")
		}
		patch.ApprovalWindowHours = req.ApprovalWindowHours
	}
	if err := v.Err(); err != nil {
		return err
	}
	st, err := s.store.UpdateMerchantSettings(r.Context(), merchant, env, patch)
	return reply(w, http.StatusOK, st, err)
}
