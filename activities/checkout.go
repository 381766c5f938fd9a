package activities

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
)

// CheckoutSessionStatus reads where a checkout session stands.
func (a *Activities) CheckoutSessionStatus(ctx context.Context, id uuid.UUID) (sika.CheckoutStatus, error) {
	c, err := a.Store.CheckoutSession(ctx, id)
	if err != nil {
		return "", fmt.Errorf("read checkout session: %w", err)
	}
	return c.Status, nil
}

// ExpireCheckoutSession moves a session still PENDING to EXPIRED (recording
// checkout_session.expired) and returns the session's status afterwards: EXPIRED, or PAID or
// CANCELLED when that happened first.
func (a *Activities) ExpireCheckoutSession(ctx context.Context, id uuid.UUID) (sika.CheckoutStatus, error) {
	c, changed, err := a.Store.ExpireCheckoutSession(ctx, id)
	if err != nil {
		return "", fmt.Errorf("expire checkout session: %w", err)
	}
	if changed {
		return c.Status, nil
	}
	return a.CheckoutSessionStatus(ctx, id)
}
