package activities

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/sikahq/sika"
	"github.com/sikahq/sika/store"
	"github.com/sikahq/sika/telemetry"
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

// DeliveryTimeout is how long an endpoint of these activities has to answer a delivery.
func DeliveryTimeout(a *Activities) time.Duration { return a.deliveryTimeout() }

// excerptLimit is how much of a response body a delivery record keeps.
const excerptLimit = 1024

// DeliverWebhook sends one signed delivery and records it, whatever happens: status code,
// latency, the first KiB of the answer. A 2xx is a success; a redirect, any other status or no
// answer within 15 s is a failure to retry; 410 Gone disables the endpoint.
func (a *Activities) DeliverWebhook(ctx context.Context, in DeliveryAttempt) (DeliveryResult, error) {
	try, err := a.tryDelivery(ctx, in)
	if err != nil || !try.sent {
		return try.res, err
	}
	return try.res, a.Store.RecordDelivery(context.WithoutCancel(ctx), try.rec, try.job.Merchant, try.job.Environment, try.disable)
}

// DeliverFromOutbox makes the first try of an outbox row's delivery outside any workflow (the
// worker's webhook sender, package workflows) and records it as DeliverWebhook does. It is not
// an activity. When no retry is wanted (delivered, or the endpoint is gone) the outbox row is
// removed in the transaction that records the try; otherwise the row stays, for the caller to
// hand the retries to a workflow.
func DeliverFromOutbox(ctx context.Context, a *Activities, outboxID int64, in DeliveryAttempt) (DeliveryResult, error) {
	try, err := a.tryDelivery(ctx, in)
	if err != nil {
		return try.res, err
	}
	ctx = context.WithoutCancel(ctx)
	switch {
	case !try.sent:
		return try.res, a.Store.DeleteOutbox(ctx, outboxID)
	case try.res.Delivered || try.res.Stop:
		return try.res, a.Store.RecordFinalOutboxDelivery(ctx, outboxID, try.rec, try.job.Merchant, try.job.Environment, try.disable)
	}
	return try.res, a.Store.RecordDelivery(ctx, try.rec, try.job.Merchant, try.job.Environment, try.disable)
}

// deliveryTry is one try at a delivery: what it found, and what to record of it.
type deliveryTry struct {
	res DeliveryResult
	// sent: a request was attempted and rec describes it; false when the endpoint is disabled or
	// deleted (res.Stop), and nothing is recorded.
	sent    bool
	rec     sika.WebhookDelivery
	job     store.DeliveryJob
	disable string // the endpoint's disabled_reason to set (410 Gone)
}

// tryDelivery sends one signed delivery and says what happened, without recording it.
func (a *Activities) tryDelivery(ctx context.Context, in DeliveryAttempt) (deliveryTry, error) {
	var try deliveryTry
	job, err := a.Store.DeliveryJob(ctx, in.Target)
	if err != nil {
		return try, err
	}
	if job.Deleted || !job.Endpoint.IsActive {
		telemetry.WebhookDeliveries.WithLabelValues(telemetry.DeliverySkipped).Inc()
		try.res.Stop = true
		return try, nil
	}
	ctx, span := telemetry.Tracer().Start(ctx, "webhook.deliver", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("sika.webhook.event", in.Target.EventID), attribute.Int("sika.webhook.attempt", in.Attempt)))
	defer span.End()
	id, err := uuid.NewV7()
	if err != nil {
		return try, err
	}
	try.sent, try.job = true, job
	try.rec = sika.WebhookDelivery{ID: id, Event: in.Target.EventID, Endpoint: in.Target.EndpointID, Attempt: in.Attempt}
	now := time.Now()
	header, err := webhook.Headers(job.Secrets, in.Target.EventID, now, job.Payload)
	if err != nil {
		return try, fmt.Errorf("sign delivery: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, a.deliveryTimeout())
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, job.Endpoint.URL, bytes.NewReader(job.Payload))
	if err != nil {
		try.rec.Error = "invalid endpoint URL"
		telemetry.WebhookDeliveries.WithLabelValues(telemetry.DeliveryFailed).Inc()
		return try, nil
	}
	req.Header = header
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Sika-Webhooks/1")
	resp, err := a.webhookClient().Do(req)
	try.rec.LatencyMS = int(time.Since(now).Milliseconds())
	if err != nil {
		try.rec.Error = storableText(err.Error(), 500)
		telemetry.WebhookDeliveries.WithLabelValues(telemetry.DeliveryFailed).Inc()
		telemetry.RecordError(span, err)
		return try, nil
	}
	defer resp.Body.Close()
	excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, excerptLimit))
	try.rec.StatusCode, try.rec.ResponseExcerpt = &resp.StatusCode, storableText(string(excerpt), excerptLimit)
	try.res.Delivered = resp.StatusCode >= 200 && resp.StatusCode < 300
	try.rec.Succeeded = try.res.Delivered
	try.res.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), now)
	if resp.StatusCode == http.StatusGone {
		try.disable, try.res.Stop = "The endpoint answered 410 Gone.", true
	}
	countDelivery(span, resp.StatusCode, try.res.Delivered, job.EventCreatedAt)
	return try, nil
}

// countDelivery counts a try the endpoint answered, and the lag from the event to a 2xx.
func countDelivery(span trace.Span, status int, delivered bool, eventCreatedAt time.Time) {
	span.SetAttributes(attribute.Int("http.response.status_code", status))
	switch {
	case delivered:
		telemetry.WebhookDeliveries.WithLabelValues(telemetry.DeliveryDelivered).Inc()
		telemetry.WebhookDeliveryLag.Observe(time.Since(eventCreatedAt).Seconds())
	case status == http.StatusGone:
		telemetry.WebhookDeliveries.WithLabelValues(telemetry.DeliveryGone).Inc()
	default:
		telemetry.WebhookDeliveries.WithLabelValues(telemetry.DeliveryFailed).Inc()
		span.SetStatus(codes.Error, http.StatusText(status))
	}
}

// retryAfter reads a Retry-After header, in seconds or as an HTTP date (RFC 9110 §10.2.3);
// 0 when absent, unreadable or not in the future.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.Atoi(v); err == nil {
		return max(0, time.Duration(secs)*time.Second)
	}
	if at, err := http.ParseTime(v); err == nil {
		return max(0, at.Sub(now))
	}
	return 0
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

// storableText is what the endpoint answered, as Postgres text keeps it: valid UTF-8 (a
// character cut by the excerpt's limit dropped), without NUL bytes (which text refuses: the
// try's record, and with it the delivery's end, would fail at every try and the event be sent
// again for ever), at most max bytes, cut between characters.
func storableText(s string, max int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, ""), "\x00", "")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
