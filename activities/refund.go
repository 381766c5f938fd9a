package activities

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/store"
)

// RefundVia decides how a refund of amount reaches the payer of collection paid (its attempt the
// operator reported paid), among the network's routes: the operator's own refund where the
// gateway that collected is a gateway.Refunder (and, for an operator that refunds only whole
// collections, the refund is whole), else a payout on a route that pays out. ok is false when
// neither is possible (Orange WebPay collects only): the refund is refused, refund_unavailable.
func RefundVia(gws *gateway.Router, routes []store.GatewayRoute, paid sika.TransactionAttempt, whole bool) (via store.RefundVia, ok bool) {
	if gw, err := gws.Gateway(paid.Gateway); err == nil {
		if gateway.SupportsRefunds(gw) && (whole || gateway.RefundsPartially(gw)) {
			return store.RefundViaOperator, true
		}
	}
	if len(payoutCandidates(gws, routes)) > 0 {
		return store.RefundViaPayout, true
	}
	return "", false
}

// payoutCandidates are the routes whose gateway this process can reach and that pay out.
func payoutCandidates(gws *gateway.Router, routes []store.GatewayRoute) []gateway.Candidate {
	var out []gateway.Candidate
	for _, r := range routes {
		if gw, err := gws.Gateway(r.Gateway); err == nil && gateway.SupportsPayouts(gw) {
			out = append(out, gateway.Candidate{Gateway: r.Gateway, Priority: r.Priority})
		}
	}
	return out
}

// prepareRefund plans a refund run: the gateway that collected, for an operator refund (only it
// can refund its collection), or the network's routes that pay out, for a payout. A refund never
// expires on our side: only the operator's final answer releases its hold.
func (a *Activities) prepareRefund(ctx context.Context, t sika.Transaction) (PaymentPlan, error) {
	route, err := a.Store.RefundRouteOf(ctx, t.ID)
	if err != nil {
		return PaymentPlan{}, fmt.Errorf("prepare refund: %w", err)
	}
	var cands []gateway.Candidate
	if route.Via == store.RefundViaOperator {
		cands = []gateway.Candidate{{Gateway: route.Paid.Gateway, Priority: 1}}
	} else {
		routes, err := a.Store.GatewayRoutes(ctx, t.NetworkID, t.Environment)
		if err != nil {
			return PaymentPlan{}, fmt.Errorf("prepare refund: %w", err)
		}
		cands = payoutCandidates(a.Gateways, routes)
	}
	return PaymentPlan{Proceed: true, Gateways: a.Gateways.Order(cands), PushLifetime: a.pushLifetime()}, nil
}

// StartRefund records the attempt (once) and sends the refund with the attempt id as reference:
// the operator's refund of the collection, naming the collection's own reference, or a payout to
// the payer's number; the same reference sent again never refunds twice.
func (a *Activities) StartRefund(ctx context.Context, in StartCollectionInput) (CollectionOutcome, error) {
	route, err := a.Store.RefundRouteOf(ctx, in.TransactionID)
	if err != nil {
		return CollectionOutcome{}, fmt.Errorf("start refund: %w", err)
	}
	return a.startAttempt(ctx, in, func(gw gateway.Gateway, t sika.Transaction, ref, _ string) (gateway.CollectResult, error) {
		var st gateway.OperationStatus
		var err error
		if route.Via == store.RefundViaOperator {
			r, ok := gateway.RefunderOf(gw)
			if !ok {
				return gateway.CollectResult{}, gateway.Invalid(gateway.FailureGatewayError, gw.Name()+" does not refund collections")
			}
			st, err = r.Refund(ctx, gateway.RefundRequest{
				Reference: ref, CollectionReference: route.Paid.ID.String(), CollectionGatewayReference: route.Paid.GatewayReference,
				Amount: t.RequestedAmount.Decimal, Currency: t.Currency, Country: t.Country, Network: t.Network,
				Phone: t.Recipient, Description: t.Description, CallbackURL: a.callbackURL(gw.Name()),
			})
		} else {
			st, err = gw.Disburse(ctx, gateway.DisburseRequest{
				Reference: ref, Amount: t.RequestedAmount.Decimal, Currency: t.Currency, Country: t.Country,
				Network: t.Network, Phone: t.Recipient, RecipientName: t.CustomerName, Description: t.Description,
				CallbackURL: a.callbackURL(gw.Name()),
			})
		}
		return gateway.CollectResult{GatewayReference: st.GatewayReference, Status: st.Status,
			FailureCode: st.FailureCode, FailureMessage: st.FailureMessage}, err
	})
}

// CheckRefund reads a refund attempt's state at its gateway (see CheckCollection), where the
// refund was sent: the operator's refund status, or the payout's.
func (a *Activities) CheckRefund(ctx context.Context, attemptID uuid.UUID) (CollectionOutcome, error) {
	attempt, err := a.Store.Attempt(ctx, attemptID)
	if err != nil {
		return CollectionOutcome{}, fmt.Errorf("check refund: %w", err)
	}
	route, err := a.Store.RefundRouteOf(ctx, attempt.Transaction)
	if err != nil {
		return CollectionOutcome{}, fmt.Errorf("check refund: %w", err)
	}
	return a.checkAttempt(ctx, attemptID, func(gw gateway.Gateway, ctx context.Context, ref string) (gateway.OperationStatus, error) {
		return refundRead(gw, route.Via)(ctx, ref)
	})
}

// StatusReader is how the attempts of transaction t are read at gw: a collection's status, a
// payout's, or a refund's where the refund was sent. Every re-check (verify, support, the
// sweeps, late callbacks) reads through it.
func StatusReader(ctx context.Context, st *store.Store, gw gateway.Gateway, t sika.Transaction) (func(context.Context, string) (gateway.OperationStatus, error), error) {
	switch {
	case t.Type == sika.TypeRefund:
		route, err := st.RefundRouteOf(ctx, t.ID)
		if err != nil {
			return nil, err
		}
		return refundRead(gw, route.Via), nil
	case t.FlowDirection == sika.DirectionOutbound:
		return gw.DisbursementStatus, nil
	}
	return gw.CollectionStatus, nil
}

// refundRead reads a refund sent the given way at gw.
func refundRead(gw gateway.Gateway, via store.RefundVia) func(context.Context, string) (gateway.OperationStatus, error) {
	if via != store.RefundViaOperator {
		return gw.DisbursementStatus
	}
	return func(ctx context.Context, ref string) (gateway.OperationStatus, error) {
		r, ok := gateway.RefunderOf(gw)
		if !ok {
			return gateway.OperationStatus{}, fmt.Errorf("%s does not refund collections any more: its refunds cannot be read", gw.Name())
		}
		return r.RefundStatus(ctx, ref)
	}
}
