package gateway

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type namedGateway struct{ name string }

func (g namedGateway) Name() string { return g.name }
func (namedGateway) Collect(context.Context, CollectRequest) (CollectResult, error) {
	return CollectResult{}, nil
}
func (namedGateway) ConfirmOTP(context.Context, string, string) (OperationStatus, error) {
	return OperationStatus{}, nil
}
func (namedGateway) CollectionStatus(context.Context, string) (OperationStatus, error) {
	return OperationStatus{}, nil
}
func (namedGateway) Disburse(context.Context, DisburseRequest) (OperationStatus, error) {
	return OperationStatus{}, nil
}
func (namedGateway) DisbursementStatus(context.Context, string) (OperationStatus, error) {
	return OperationStatus{}, nil
}
func (namedGateway) ParseCallback(context.Context, http.Header, []byte) (Callback, error) {
	return Callback{}, nil
}

func names(cs []Candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Gateway
	}
	return out
}

func TestRouterOrdersByPriorityAndHealth(t *testing.T) {
	now := time.Unix(1000, 0)
	r := NewRouter(HealthPolicy{FailuresToTrip: 2, Cooldown: time.Minute}, namedGateway{"a"}, namedGateway{"b"}, namedGateway{"c"})
	r.now = func() time.Time { return now }
	cands := []Candidate{{"b", 2}, {"a", 1}, {"zz", 0}, {"c", 3}}
	assert.Equal(t, []string{"a", "b", "c"}, names(r.Order(cands)), "by priority; unknown gateways dropped")

	r.Observe("a", Unavailable(errors.New("503")))
	assert.True(t, r.Healthy("a"), "one failure does not trip")
	r.Observe("a", Unavailable(errors.New("503")))
	assert.False(t, r.Healthy("a"))
	assert.Equal(t, []string{"b", "c", "a"}, names(r.Order(cands)), "unhealthy last, still tried")

	now = now.Add(2 * time.Minute)
	assert.True(t, r.Healthy("a"), "cooldown over")
	r.Observe("b", AuthFailed(errors.New("401")))
	r.Observe("b", AuthFailed(errors.New("401")))
	require.False(t, r.Healthy("b"))
	r.Observe("b", Declined(FailurePayerDeclined, ""))
	assert.True(t, r.Healthy("b"), "a decline proves the gateway answers")
	r.Observe("c", Ambiguous(errors.New("timeout")))
	r.Observe("c", Ambiguous(errors.New("timeout")))
	assert.True(t, r.Healthy("c"), "ambiguous outcomes do not trip the breaker")
	_, err := r.Gateway("zz")
	assert.Error(t, err)
}

func TestErrorTaxonomy(t *testing.T) {
	assert.Equal(t, KindAmbiguous, KindOf(errors.New("anything unknown")), "unknown failures are ambiguous")
	err := Declined(FailureInsufficientFunds, "no money")
	assert.Equal(t, KindDeclined, KindOf(err))
	assert.Equal(t, FailureInsufficientFunds, CodeOf(err))
	wrapped := errors.Join(errors.New("context"), Invalid(FailureInvalidNumber, "bad"))
	assert.Equal(t, KindInvalid, KindOf(wrapped))
	assert.Contains(t, Unavailable(errors.New("dial")).Error(), "unavailable")
}
