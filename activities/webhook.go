package activities

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/webhook"
)

// DeliveryAttempt names one try at delivering an event to an endpoint.
type DeliveryAttempt struct {
	Target  store.DeliveryTarget
	Attempt int
}

// DeliveryResult is what a try found.
type DeliveryResult struct {
	// Delivered: the endpoint answered 2xx.
	Delivered bool
	// Stop: no further try is wanted (the endpoint is gone, disabled or answered 410).
	Stop bool
	// RetryAfter is the endpoint's own Retry-After, when it sent one.
	RetryAfter time.Duration
}

// defaultDeliveryTimeout is how long an endpoint has to answer (contract §9).
const defaultDeliveryTimeout = 15 * time.Second

func (a *Activities) deliveryTimeout() time.Duration {
	if a.WebhookTimeout > 0 {
		return a.WebhookTimeout
	}
	return defaultDeliveryTimeout
}

// excerptLimit is how much of a response body a delivery record keeps.
const excerptLimit = 1024

// DeliverWebhook sends one signed delivery and records it, whatever happens: status code,
// latency, the first KiB of the answer. A 2xx is a success; a redirect, any other status or no
// answer within 15 s is a failure to retry; 410 Gone disables the endpoint.
func (a *Activities) DeliverWebhook(ctx context.Context, in DeliveryAttempt) (DeliveryResult, error) {
	job, err := a.Store.DeliveryJob(ctx, in.Target)
	if err != nil {
		return DeliveryResult{}, err
	}
	if job.Deleted || !job.Endpoint.IsActive {
		return DeliveryResult{Stop: true}, nil
	}
	id, err := uuid.NewV7()
	if err != nil {
		return DeliveryResult{}, err
	}
	rec := sika.WebhookDelivery{ID: id, Event: in.Target.EventID, Endpoint: in.Target.EndpointID, Attempt: in.Attempt}
	now := time.Now()
	header, err := webhook.Headers(job.Secrets, in.Target.EventID, now, job.Payload)
	if err != nil {
		return DeliveryResult{}, fmt.Errorf("sign delivery: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, a.deliveryTimeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, job.Endpoint.URL, bytes.NewReader(job.Payload))
	if err != nil {
		rec.Error = "invalid endpoint URL"
		return DeliveryResult{}, a.recordDelivery(ctx, rec, job, "")
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Sika-Webhooks/1")
	resp, err := a.webhookClient().Do(req)
	rec.LatencyMS = int(time.Since(now).Milliseconds())
	if err != nil {
		rec.Error = err.Error()
		if len(rec.Error) > 500 {
			rec.Error = rec.Error[:500]
		}
		return DeliveryResult{}, a.recordDelivery(ctx, rec, job, "")
	}
	defer resp.Body.Close()
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, excerptLimit))
	rec.StatusCode, rec.ResponseExcerpt = &resp.StatusCode, string(bytes.ToValidUTF8(excerpt, nil))
	res := DeliveryResult{Delivered: resp.StatusCode >= 200 && resp.StatusCode < 300}
	rec.Succeeded = res.Delivered
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
		res.RetryAfter = time.Duration(secs) * time.Second
	}
	disable := ""
	if resp.StatusCode == http.StatusGone {
		disable, res.Stop = "The endpoint answered 410 Gone.", true
	}
	return res, a.recordDelivery(ctx, rec, job, disable)
}

func (a *Activities) recordDelivery(ctx context.Context, rec sika.WebhookDelivery, job store.DeliveryJob, disable string) error {
	return a.Store.RecordDelivery(context.WithoutCancel(ctx), rec, job.Merchant, job.Environment, disable)
}

// webhookClient posts deliveries through the SSRF guard and never follows redirects.
func (a *Activities) webhookClient() *http.Client {
	a.clientOnce.Do(func() {
		a.client = &http.Client{
			Transport: a.WebhookGuard.Transport(a.deliveryTimeout()),
			Timeout:   a.deliveryTimeout(),
			CheckRedirect: func(*http.Request, []*http.Request) error {
				return http.ErrUseLastResponse
			},
		}
	})
	return a.client
}
