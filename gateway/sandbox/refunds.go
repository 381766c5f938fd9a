package sandbox

import (
	"net/http"

	"github.com/shopspring/decimal"

	"github.com/sikahq/sika/gateway"
)

// Refunds: POST /gw/{name}/v1/refunds gives back (part of) a successful collection of the same
// gateway, named by its reference (collection_reference), to the collection's payer. It is an
// operation like a payout: its outcome is chosen by the last three digits of the number as for
// payouts (operators.md), it is read at GET /gw/{name}/v1/refunds/{reference}, and its callbacks
// have type "refund". The sandbox refuses, as an operator would, a refund of a collection it
// does not know at this gateway (400 collection_not_found), of one that did not succeed (409
// not_refundable), or beyond what is left of the collection once its refunds not FAILED are
// counted (409 refund_exceeds_collection). Sika sends the payer's number; the sandbox pays the
// number the request names and picks the outcome by it, as for a payout, so that a test can
// steer a refund of any collection.

var (
	errCollectionNotFound = &apiError{http.StatusBadRequest, "collection_not_found", "No collection with this collection_reference at this gateway."}
	errNotRefundable      = &apiError{http.StatusConflict, "not_refundable", "Only a successful collection can be refunded."}
	errRefundExceeds      = &apiError{http.StatusConflict, "refund_exceeds_collection", "The refunds of this collection would exceed its amount."}
)

// refundableLocked checks a new refund of amount against the collection it names and returns
// that collection.
func (s *Server) refundableLocked(gw GatewayConfig, req *initiationRequest, amount decimal.Decimal) (*operation, *apiError) {
	if req.CollectionReference == "" {
		return nil, invalidRequest("collection_reference is required")
	}
	col := s.foundLocked(opKey{gw.Name, kindCollection, req.CollectionReference})
	switch {
	case col == nil:
		return nil, errCollectionNotFound
	case col.status != gateway.StatusSuccess:
		return nil, errNotRefundable
	case col.currency != req.Currency:
		return nil, invalidRequest("currency must be the collection's")
	case col.refunded.Add(amount).GreaterThan(col.amount):
		return nil, errRefundExceeds
	}
	return col, nil
}
