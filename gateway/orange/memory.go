package orange

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// What the adapter keeps in gateway.Memory, under three keys:
//
//   - the reference: the payment Orange created for it (payment), written only once Orange's
//     answer is in hand and never overwritten by a later attempt to send;
//   - "sent:"+reference: an initiation on its way whose answer is not remembered (sending);
//   - "notif:"+notif_token: the reference a notification is about (notifLink), since Orange's
//     notification names no order.
//
// Keeping the payment apart from the marker means that two processes initiating the same
// reference at once cannot erase each other's pay_token: at worst they rewrite the marker.

// payment is what a status read, a repeated Collect and a notification need about one payment.
type payment struct {
	OrderID    string `json:"order_id"`
	Amount     string `json:"amount"`   // as sent: a whole number of units
	Currency   string `json:"currency"` // as sent
	Country    string `json:"country"`  // ISO alpha-2
	Segment    string `json:"segment"`  // the {country} path segment it was sent to
	PayToken   string `json:"pay_token"`
	NotifToken string `json:"notif_token"`
	PaymentURL string `json:"payment_url"`
}

// sending marks an initiation that was sent, or is being sent, and whose answer is not
// remembered: the answer may still come, or it was lost.
type sending struct {
	SentAt time.Time `json:"sent_at"`
	// Unsent: the initiation certainly did not reach Orange (a refused connection, a 503, a
	// refusal of the request): nothing exists there and the reference may be sent again.
	Unsent bool `json:"unsent,omitempty"`
}

// notifLink leads from a notif_token to its reference.
type notifLink struct {
	Reference string `json:"reference"`
}

func sentKey(ref string) string  { return "sent:" + ref }
func notifKey(tok string) string { return "notif:" + tok }
func (c *Client) memoryErr(op string, err error) error {
	return fmt.Errorf("%s: memory %s: %w", c.cfg.Name, op, err)
}

// remember stores v (as JSON) under key.
func (c *Client) remember(ctx context.Context, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return c.memoryErr("encode", err)
	}
	if err := c.cfg.Memory.Remember(ctx, c.cfg.Name, key, raw); err != nil {
		return c.memoryErr("write", err)
	}
	return nil
}

// recall loads what is stored under key into v; found is false when nothing is.
func (c *Client) recall(ctx context.Context, key string, v any) (found bool, err error) {
	raw, found, err := c.cfg.Memory.Recall(ctx, c.cfg.Name, key)
	if err != nil {
		return false, c.memoryErr("read", err)
	}
	if !found {
		return false, nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, c.memoryErr("decode", err)
	}
	return true, nil
}

// paymentOf recalls the payment Orange created for ref, if any.
func (c *Client) paymentOf(ctx context.Context, ref string) (payment, bool, error) {
	var p payment
	found, err := c.recall(ctx, ref, &p)
	if found && p.PayToken == "" {
		return payment{}, false, c.memoryErr("decode", fmt.Errorf("payment of %s has no pay_token", ref))
	}
	return p, found, err
}

// markerOf recalls the in-flight marker of ref; found is false when there is none or when it
// says the initiation never reached Orange.
func (c *Client) markerOf(ctx context.Context, ref string) (sending, bool, error) {
	var m sending
	found, err := c.recall(ctx, sentKey(ref), &m)
	if err != nil || !found || m.Unsent {
		return sending{}, false, err
	}
	return m, true, nil
}
