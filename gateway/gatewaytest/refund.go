package gatewaytest

import (
	"context"
	"testing"

	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
)

// refund is the refund operation of a gateway.Refunder: each case first collects the request
// template's amount (paid), then refunds it, or half of it when the operator refunds parts.
func (c contract) refund() op {
	col := c.collection()
	return op{
		name: "refund",
		kind: gateway.CallbackRefund,
		status: func(ctx context.Context, gw gateway.Gateway, ref string) (gateway.OperationStatus, error) {
			return refunder(gw).RefundStatus(ctx, ref)
		},
		prepare: func(t *testing.T, gw gateway.Gateway) (func(context.Context, string) (gateway.OperationStatus, error), int) {
			paid := c.paidCollection(t, gw, col)
			amount := c.f.Amount
			if !c.f.RefundsWholeOnly {
				amount = amount.Div(decimal.NewFromInt(2)).Floor()
			}
			return func(ctx context.Context, ref string) (gateway.OperationStatus, error) {
				return refunder(gw).Refund(ctx, c.refundRequest(ref, paid, amount))
			}, 1
		},
	}
}

func refunder(gw gateway.Gateway) gateway.Refunder {
	r, ok := gw.(gateway.Refunder)
	if !ok {
		panic("Features.Refunds on an adapter that is no gateway.Refunder")
	}
	return r
}

// paidCollection collects the template's amount at gw and waits until it is paid.
func (c contract) paidCollection(t *testing.T, gw gateway.Gateway, col op) gateway.OperationStatus {
	t.Helper()
	ref := Reference()
	_, err := col.initiate(t.Context(), gw, ref)
	require.NoError(t, err)
	st := c.final(t, gw, col, ref)
	require.Equal(t, gateway.StatusSuccess, st.Status, "the collection to refund is paid")
	return st
}

func (c contract) refundRequest(ref string, paid gateway.OperationStatus, amount decimal.Decimal) gateway.RefundRequest {
	return gateway.RefundRequest{Reference: ref, CollectionReference: paid.Reference, CollectionGatewayReference: paid.GatewayReference,
		Amount: amount, Currency: c.f.Currency, Country: c.f.Country, Network: c.f.Network, Phone: c.f.Phone, Description: "Refund 42"}
}

// refundBeyond: the operator never refunds more than the collection. A refund of the whole
// amount and then of one unit more: the second is refused at once or ends FAILED, never SUCCESS.
func (c contract) refundBeyond(t *testing.T) {
	gw, _ := c.h.New(t)
	col := c.collection()
	paid := c.paidCollection(t, gw, col)
	r := refunder(gw)
	whole := Reference()
	_, err := r.Refund(t.Context(), c.refundRequest(whole, paid, c.f.Amount))
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusSuccess, c.final(t, gw, c.refund(), whole).Status)
	more := Reference()
	one := decimal.NewFromInt(1)
	if c.f.RefundsWholeOnly {
		one = c.f.Amount
	}
	st, err := r.Refund(t.Context(), c.refundRequest(more, paid, one))
	if err != nil {
		assert.Contains(t, []gateway.Kind{gateway.KindInvalid, gateway.KindDeclined}, gateway.KindOf(err), "%v", err)
		return
	}
	assert.NotEqual(t, gateway.StatusSuccess, st.Status)
	assert.Equal(t, gateway.StatusFailed, c.final(t, gw, c.refund(), more).Status, "a refund beyond the collection fails")
}
