package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/web/webapp"
)

// RefundQuote is what a refund of a flag would do (api.Server.QuoteRefund).
type RefundQuote struct {
	Amount, Fee, Debited, Left sika.Amount
	Currency                   string
	ViaOperator                bool
}

// flagData is a money flag's page: the flag, its transaction, the decisions about it, and the
// form of the action its kind takes (a refund, with its quote; a re-held payout's end).
type flagData struct {
	Flag        store.MoneyFlag
	Transaction sika.Transaction
	Decisions   []store.MoneyDecision
	// Amount is the refund amount the form shows (the flag's, or the one asked for the quote);
	// Quote is its price, QuoteError why it cannot be refunded.
	Amount     string
	Quote      *RefundQuote
	QuoteError string
	Proposed   bool
}

// Waiting is the decision about the flag's transaction that waits for approval, if any.
func (d flagData) Waiting() *store.MoneyDecision {
	for i := range d.Decisions {
		if d.Decisions[i].Status == store.DecisionPending {
			return &d.Decisions[i]
		}
	}
	return nil
}

// RefundStatus is the status of the flag's latest refund ("" without one).
func (d flagData) RefundStatus() sika.TransactionStatus {
	if d.Flag.RefundStatus == nil {
		return ""
	}
	return *d.Flag.RefundStatus
}

// RefundInFlight reports whether the open flag's latest refund keeps another from being proposed
// (store.CheckNoRefundInFlight: still PENDING, or re-held after its operator reported it paid).
func (d flagData) RefundInFlight() bool {
	return d.Flag.ResolvedAt == nil && store.CheckNoRefundInFlight(d.Flag) != nil
}

// flag shows a money flag with the action it takes: for REFUND_DUE, the refund's quote for
// ?amount= (the flag's amount by default) and the proposal form; for PAYOUT_PAID_AFTER_RELEASE,
// the settle-or-release form. A money approver approves the proposal on the decisions page.
func (a *App) flag(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Money flag")
	if err != nil {
		return err
	}
	ctx := r.Context()
	d := flagData{Proposed: r.URL.Query().Get("proposed") != ""}
	if d.Flag, err = a.cfg.Store.MoneyFlag(ctx, id); err != nil {
		return err
	}
	if d.Transaction, err = a.cfg.Store.Transaction(ctx, d.Flag.Transaction); err != nil {
		return err
	}
	if d.Decisions, err = a.cfg.Store.MoneyDecisions(ctx, "", d.Flag.Transaction, listLimit); err != nil {
		return err
	}
	if d.Flag.Kind == store.FlagRefundDue && d.Flag.ResolvedAt == nil && !d.RefundInFlight() {
		d.Amount = strings.TrimSpace(r.URL.Query().Get("amount"))
		if d.Amount == "" {
			d.Amount = d.Flag.Amount.String()
		}
		q, err := a.cfg.QuoteFlagRefund(ctx, d.Flag, d.Amount)
		switch {
		case err == nil:
			d.Quote = &q
		case sika.ErrorCode(err) != "":
			d.QuoteError = err.Error()
		default:
			return err
		}
	}
	return a.render(w, r, http.StatusOK, "flag", &view{visit: v, Title: "flag_title", Nav: "flags", Data: d})
}

// proposeFlagRefund proposes the refund of a REFUND_DUE flag (api.Server.ProposeFlagRefund, as
// POST /admin/money-flags/{id}/refund/); back to the flag, which shows the proposal.
func (a *App) proposeFlagRefund(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Money flag")
	if err != nil {
		return err
	}
	if _, err := a.cfg.ProposeFlagRefund(r.Context(), v.Member, id, r.PostFormValue("amount"), r.PostFormValue("reason")); err != nil {
		return err
	}
	webapp.Redirect(w, r, Prefix+"flags/"+id.String()+"/?proposed=1")
	return nil
}

// proposeReheld proposes to settle (SUCCESS) or release (FAILED) a payout held again after a
// late success (api.ProposeReheldPayout, as POST /admin/money-flags/{id}/settle/).
func (a *App) proposeReheld(w http.ResponseWriter, r *http.Request, v *visit) error {
	id, err := webapp.PathID(r, "Money flag")
	if err != nil {
		return err
	}
	status := sika.TransactionStatus(strings.ToUpper(strings.TrimSpace(r.PostFormValue("status"))))
	if _, err := a.cfg.ProposeReheld(r.Context(), v.Member, id, status, r.PostFormValue("reason")); err != nil {
		return err
	}
	webapp.Redirect(w, r, Prefix+"flags/"+id.String()+"/?proposed=1")
	return nil
}

// approvedURL is where an approval sends the approver: the flag of a flag's decision (with the
// refund issued, or what was settled or released), the transaction otherwise.
func approvedURL(d store.MoneyDecision, res Resolution) string {
	if d.Flag != nil {
		q := url.Values{"approved": {string(d.Kind)}}
		if res.Refund != uuid.Nil {
			q.Set("refund", res.Refund.String())
		}
		return Prefix + "flags/" + d.Flag.String() + "/?" + q.Encode()
	}
	return Prefix + "transactions/" + d.Transaction.String() + "/?" + url.Values{
		"resolved": {string(res.Status)}, "decided_by": {res.DecidedBy}, "operator_answer": {res.OperatorAnswer}}.Encode()
}
