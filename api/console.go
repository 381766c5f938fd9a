package api

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/gorilla/mux"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/console"
	"github.com/sikahq/sika/workflows"
)

// consoleRoutes mounts the support console (package web/console) under /console/, beside the
// dashboard. It is handed the API's own code where it acts: the login rule and budget of
// POST /auth/login/, the re-verify of POST /admin/transactions/{id}/reverify/, the resolution of
// POST /admin/transactions/{id}/resolve/ and of the money flags' refund and settle routes, and
// the two-person rule's approval and rejection (ProposeResolution, ProposeFlagRefund,
// ProposeReheldPayout, ApproveMoneyDecision, RejectMoneyDecision), the KYC file checks of
// GET /merchant-kyc/files/, the Temporal UI links of the admin lists, and the codec server of
// that UI (PayloadKeys; CORS for the UI's origin).
func (s *Server) consoleRoutes(root *mux.Router) {
	var codec http.Handler
	if s.cfg.PayloadKeys != nil {
		codec = s.cfg.PayloadKeys.DecodeHandler()
	}
	var origins []string
	if o := console.OriginOf(s.cfg.TemporalUIURL); o != "" {
		origins = append(origins, o)
	}
	app := console.New(console.Config{
		Store:         s.store,
		PublicURL:     s.cfg.PublicURL,
		CheckPassword: s.checkPassword,
		ThrottleLogin: s.throttleLogin,
		Reverify:      s.consoleReverify,
		Propose: func(ctx context.Context, staff sika.Member, id uuid.UUID, status sika.TransactionStatus, reason string) (store.MoneyDecision, error) {
			d, err := ProposeResolution(ctx, s.store, id, SupportDecision{Status: status, Reason: reason}, staff)
			if err == nil {
				logFrom(ctx).Warn("payout resolution proposed (console)", "transaction", id, "staff", staff.ID, "requested", status, "decision", d.ID)
			}
			return d, err
		},
		QuoteFlagRefund: func(ctx context.Context, f store.MoneyFlag, amount string) (console.RefundQuote, error) {
			q, err := s.QuoteRefund(ctx, f.Merchant, f.Environment, RefundOrder{Transaction: f.Transaction, Amount: &amount})
			v := q.View()
			return console.RefundQuote{Amount: v.Amount, Fee: v.Fee, Debited: v.Debited, Left: v.Left, Currency: v.Currency,
				ViaOperator: v.Via == store.RefundViaOperator}, err
		},
		ProposeFlagRefund: func(ctx context.Context, staff sika.Member, flag uuid.UUID, amount, reason string) (store.MoneyDecision, error) {
			d, _, err := s.ProposeFlagRefund(ctx, flag, &amount, reason, staff)
			if err == nil {
				logFrom(ctx).Warn("flag refund proposed (console)", "flag", flag, "transaction", d.Transaction, "staff", staff.ID, "decision", d.ID)
			}
			return d, err
		},
		ProposeReheld: func(ctx context.Context, staff sika.Member, flag uuid.UUID, status sika.TransactionStatus, reason string) (store.MoneyDecision, error) {
			d, err := ProposeReheldPayout(ctx, s.store, flag, SupportDecision{Status: status, Reason: reason}, staff)
			if err == nil {
				logFrom(ctx).Warn("re-held payout decision proposed (console)", "flag", flag, "staff", staff.ID, "requested", status, "decision", d.ID)
			}
			return d, err
		},
		Approve: func(ctx context.Context, staff sika.Member, id uuid.UUID) (console.Resolution, error) {
			a, err := s.ApproveMoneyDecision(ctx, id, staff)
			if err != nil {
				return console.Resolution{}, err
			}
			log := logFrom(ctx).With("decision", id, "kind", a.Decision.Kind, "transaction", a.Decision.Transaction, "staff", staff.ID)
			switch {
			case a.Resolution != nil:
				res := a.Resolution
				log.Warn("payout resolution approved (console)", "operator_answer", res.OperatorAnswer, "decided_by", res.DecidedBy, "status", res.Transaction.Status)
				return console.Resolution{Status: res.Transaction.Status, DecidedBy: res.DecidedBy, OperatorAnswer: res.OperatorAnswer}, nil
			case a.Refund != nil:
				log.Warn("flag refund approved and issued (console)", "refund", a.Refund.ID)
				return console.Resolution{Status: a.Refund.Status, Refund: a.Refund.ID}, nil
			case a.Reheld != nil:
				log.Warn("re-held payout decided (console)", "status", a.Reheld.Status)
				return console.Resolution{Status: a.Reheld.Status}, nil
			}
			return console.Resolution{}, nil
		},
		Reject: func(ctx context.Context, staff sika.Member, id uuid.UUID, note string) error {
			_, err := RejectMoneyDecision(ctx, s.store, id, staff, note)
			return err
		},
		WorkflowURL: func(t sika.Transaction) string { return s.workflowURL(workflows.WorkflowIDOf(t)) },
		ServeKYCFile: func(w http.ResponseWriter, r *http.Request, sha256, ext string) error {
			return s.writeStoredKYCFile(w, r, nil, sha256, ext, true) // nil: staff, any merchant's file
		},
		Codec:        codec,
		CodecOrigins: origins,
		ClientIP:     s.clientIP,
		RouteMatched: routeName,
		Logger:       s.cfg.Logger,
		Now:          s.cfg.Now,
	})
	mountWebApp(root, console.Prefix, app)
}

// consoleReverify re-checks a transaction at its gateway as POST
// /admin/transactions/{id}/reverify/ does (recheckAtGateway), for a staff member of the
// console, and records the staff action.
func (s *Server) consoleReverify(ctx context.Context, staff sika.Member, id uuid.UUID) (console.Reverification, error) {
	t, err := s.store.Transaction(ctx, id)
	if err != nil {
		return console.Reverification{}, err
	}
	rc, err := s.recheckAtGateway(ctx, t)
	if err != nil {
		return console.Reverification{}, err
	}
	d, err := s.store.TransactionDetail(ctx, t.Merchant, t.Environment, t.ID)
	if err != nil {
		return console.Reverification{}, err
	}
	out := console.Reverification{GatewayStatus: string(rc.Gateway.Status), SentToGateway: rc.Asked, Disagreement: rc.Disagrees,
		Message: rc.Gateway.FailureMessage, Status: d.Status}
	return out, s.recordReverify(ctx, staff, t, rc, d)
}

// recordReverify audits a staff re-verification (the JSON route's and the console's alike).
func (s *Server) recordReverify(ctx context.Context, staff sika.Member, t sika.Transaction, rc workflows.Recheck, d sika.TransactionDetail) error {
	if err := s.store.RecordStaffAction(ctx, store.StaffAction{Staff: staff.ID, Action: store.StaffActionReverified, Transaction: &t.ID,
		Detail: map[string]any{"merchant": t.Merchant, "gateway_status": string(rc.Gateway.Status), "sent_to_gateway": rc.Asked,
			"disagreement": rc.Disagrees, "status": d.Status}}); err != nil {
		return err
	}
	logFrom(ctx).Info("transaction re-verified by staff", "transaction", t.ID, "staff", staff.ID,
		"gateway_status", rc.Gateway.Status, "record", d.Status)
	return nil
}
