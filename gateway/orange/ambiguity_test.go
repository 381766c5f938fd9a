package orange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sikahq/sika/gateway"
	"github.com/sikahq/sika/gateway/gatewaytest"
	"github.com/sikahq/sika/gateway/orange/orangefake"
)

// hookedMemory is a MapMemory whose writes and reads a test may fail, delay or hide.
type hookedMemory struct {
	gateway.MapMemory
	beforeRemember func(key string) error
	hideRecall     func(key string) bool
}

func (m *hookedMemory) Remember(ctx context.Context, gw, key string, data []byte) error {
	if m.beforeRemember != nil {
		if err := m.beforeRemember(key); err != nil {
			return err
		}
	}
	return m.MapMemory.Remember(ctx, gw, key, data)
}

func (m *hookedMemory) Recall(ctx context.Context, gw, key string) ([]byte, bool, error) {
	if m.hideRecall != nil && m.hideRecall(key) {
		return nil, false, nil
	}
	return m.MapMemory.Recall(ctx, gw, key)
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *fakeClock) advance(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

const lostMessage = "answer to the payment request was lost"

// An initiation created at Orange whose answer never arrived: nobody holds its payment page, so
// nobody can pay it, and its pay_token, without which Orange answers no status read, is lost.
func TestLostAnswerIsPendingThenFailed(t *testing.T) {
	f := newFake(t)
	clock := newFakeClock()
	c := newClient(t, f, func(cfg *Config) { cfg.Now = clock.Now; cfg.UnansweredAfter = time.Minute })
	ref := gatewaytest.Reference()
	f.Next(gatewaytest.TimeoutAfterAccept)
	_, err := c.Collect(t.Context(), collectReq(ref))
	assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "%v", err)
	require.Equal(t, 1, f.Operations())

	st, err := c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusPending, st.Status, "the answer may still come: not NOT_FOUND, which invites a re-send")
	_, err = c.Collect(t.Context(), collectReq(ref))
	assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "%v", err)
	assert.Equal(t, 1, f.Operations(), "a repeated Collect sends nothing while the first is unresolved")

	clock.advance(time.Minute + time.Millisecond)
	st, err = c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusFailed, st.Status)
	assert.Equal(t, gateway.FailureGatewayError, st.FailureCode)
	assert.Contains(t, st.FailureMessage, lostMessage)
	res, err := c.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusFailed, res.Status)
	assert.Empty(t, res.NextAction.URL)
	assert.Equal(t, 1, f.Operations())
	assert.True(t, !paymentOf(t, f, ref).Delivered, "its page never left Orange")
}

// A 5xx after Orange created the payment is the same case as a timeout.
func TestServerErrorAfterCreateResolvesAsLost(t *testing.T) {
	f := newFake(t)
	clock := newFakeClock()
	c := newClient(t, f, func(cfg *Config) { cfg.Now = clock.Now })
	ref := gatewaytest.Reference()
	f.ForceNext(http.StatusGatewayTimeout, true, `{"code":504,"message":"Gateway Timeout"}`)
	_, err := c.Collect(t.Context(), collectReq(ref))
	assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "%v", err)
	clock.advance(2 * time.Second)
	st, err := c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusFailed, st.Status)
	assert.Equal(t, 1, f.Operations())
}

// An answer that could not be remembered is never handed out: a customer could pay a page that
// status reads would then call unanswered.
func TestAnswerNotRememberedIsWithheld(t *testing.T) {
	f := newFake(t)
	clock := newFakeClock()
	ref := gatewaytest.Reference()
	memory := &hookedMemory{beforeRemember: func(key string) error {
		if key == ref {
			return errors.New("connection reset by the database")
		}
		return nil
	}}
	c := newClient(t, f, func(cfg *Config) { cfg.Now = clock.Now; cfg.Memory = memory })
	res, err := c.Collect(t.Context(), collectReq(ref))
	assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "%v", err)
	assert.Empty(t, res.NextAction.URL)
	assert.Contains(t, err.Error(), "withheld")
	assertNoSecrets(t, err)

	st, err := c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusPending, st.Status)
	clock.advance(2 * time.Second)
	st, err = c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusFailed, st.Status)

	_, body := f.Notification(orderIDOf(t, ref)) // its notif_token was remembered, its payment not
	_, err = c.ParseCallback(t.Context(), nil, body)
	assert.Error(t, err)
}

// An answer remembered only after UnansweredAfter (a very slow write) is withheld too: a status
// read may already have called the reference unanswered. Later status reads read Orange.
func TestAnswerRememberedTooLateIsWithheld(t *testing.T) {
	f := newFake(t)
	f.NextOutcome("") // nobody has the page: nobody pays
	clock := newFakeClock()
	ref := gatewaytest.Reference()
	memory := &hookedMemory{beforeRemember: func(key string) error {
		if key == ref {
			clock.advance(2 * time.Second)
		}
		return nil
	}}
	c := newClient(t, f, func(cfg *Config) { cfg.Now = clock.Now; cfg.Memory = memory })
	res, err := c.Collect(t.Context(), collectReq(ref))
	assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "%v", err)
	assert.Empty(t, res.NextAction.URL)
	st, err := c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusPending, st.Status, "read at Orange: INITIATED")
	assert.Equal(t, paymentOf(t, f, ref).PayToken, st.GatewayReference)
}

func TestMemoryUnreadableOnCollectIsAmbiguous(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f, func(cfg *Config) { cfg.Memory = failingMemory{} })
	_, err := c.Collect(t.Context(), collectReq(gatewaytest.Reference()))
	assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "whether it was sent before is unknown: %v", err)
	assert.Zero(t, f.Operations())
}

// failingMemory fails every call.
type failingMemory struct{}

func (failingMemory) Remember(context.Context, string, string, []byte) error {
	return errors.New("memory down")
}

func (failingMemory) Recall(context.Context, string, string) ([]byte, bool, error) {
	return nil, false, errors.New("memory down")
}

// Two processes send the same reference at once (the second did not see the first's answer
// yet): Orange refuses the duplicate order_id, and the second answers with the first's payment.
func TestDuplicateOrderReadsTheExistingPayment(t *testing.T) {
	f := orangefake.New(t) // the customer pays when the test says: both answers are the page
	ref := gatewaytest.Reference()
	hide := map[string]bool{}
	memory := &hookedMemory{hideRecall: func(key string) bool {
		hidden := hide[key]
		delete(hide, key)
		return hidden
	}}
	first := newClient(t, f, func(cfg *Config) { cfg.Memory = memory })
	second := newClient(t, f, func(cfg *Config) { cfg.Memory = memory })
	res1, err := first.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	hide[ref], hide[sentKey(ref)] = true, true // the second's first look finds nothing
	res2, err := second.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	assert.Equal(t, res1, res2)
	assert.Equal(t, 1, f.Operations())
	f.Pay(res1.NextAction.URL)
	assert.Equal(t, gateway.StatusSuccess, eventually(t, second, ref).Status)

	// a process that shares no Memory cannot learn the payment: ambiguous, never a second one
	alone := newClient(t, f, nil)
	_, err = alone.Collect(t.Context(), collectReq(ref))
	assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "%v", err)
	assert.Contains(t, err.Error(), "409")
	assert.Equal(t, 1, f.Operations())
}

func TestConcurrentCollectsCreateOnePayment(t *testing.T) {
	f := newFake(t)
	c := newClient(t, f, func(cfg *Config) { cfg.Timeout = 2 * time.Second })
	ref := gatewaytest.Reference()
	var wg sync.WaitGroup
	var mu sync.Mutex
	urls := map[string]bool{}
	for range 10 {
		wg.Go(func() {
			res, err := c.Collect(t.Context(), collectReq(ref))
			if err != nil {
				assert.Equal(t, gateway.KindAmbiguous, gateway.KindOf(err), "%v", err)
				return
			}
			mu.Lock()
			urls[res.NextAction.URL] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	assert.Equal(t, 1, f.Operations())
	assert.LessOrEqual(t, len(urls), 1, "one payment page at most")
	assert.Equal(t, gateway.StatusSuccess, eventually(t, c, ref).Status)
}

// notifServer is our callback endpoint: it hands what the adapter parsed to the test.
func notifServer(t *testing.T, c *Client) (string, <-chan gateway.Callback) {
	parsed := make(chan gateway.Callback, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		cb, err := c.ParseCallback(r.Context(), r.Header, body)
		if err != nil {
			http.Error(w, "refused", http.StatusUnauthorized)
			return
		}
		parsed <- cb
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/gateway-callbacks/orange/", parsed
}

// collectNotified collects a fresh reference whose notifications go to c's endpoint, which
// hands what it parsed to the channel.
func collectNotified(t *testing.T, c *Client) (string, gateway.CollectResult, <-chan gateway.Callback) {
	t.Helper()
	url, parsed := notifServer(t, c)
	ref := gatewaytest.Reference()
	req := collectReq(ref)
	req.CallbackURL = url
	res, err := c.Collect(t.Context(), req)
	require.NoError(t, err)
	return ref, res, parsed
}

func TestNotification(t *testing.T) {
	f := orangefake.New(t) // the customer acts when the test says
	memory := &gateway.MapMemory{}
	c := newClient(t, f, func(cfg *Config) { cfg.Memory = memory })
	ref, res, parsed := collectNotified(t, c)
	st, err := c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusPending, st.Status, "nobody paid yet")
	assert.Error(t, f.Notify(res.NextAction.URL), "Orange notifies only a payment that has ended")

	f.Pay(res.NextAction.URL)
	require.NoError(t, f.Notify(res.NextAction.URL))
	cb := <-parsed
	assert.Equal(t, gateway.CallbackCollection, cb.Kind)
	assert.Equal(t, ref, cb.Reference)
	assert.Equal(t, gateway.StatusSuccess, cb.Status)
	assert.Equal(t, paymentOf(t, f, ref).PayToken, cb.GatewayReference)
	assert.False(t, cb.Trusted, "unsigned: the workflow confirms it with a status read")
	st, err = c.CollectionStatus(t.Context(), ref)
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusSuccess, st.Status)

	// another process (the API) parses it from the shared Memory
	api := newClient(t, f, func(cfg *Config) { cfg.Memory = memory })
	_, body := f.Notification(orderIDOf(t, ref))
	again, err := api.ParseCallback(t.Context(), nil, body)
	require.NoError(t, err)
	assert.Equal(t, cb, again)
}

// The customer declines on the page; Orange's notification says so.
func TestDeclineNotified(t *testing.T) {
	f := orangefake.New(t)
	ref, res, parsed := collectNotified(t, newClient(t, f, nil))
	f.Decline(res.NextAction.URL)
	require.NoError(t, f.Notify(res.NextAction.URL))
	cb := <-parsed
	assert.Equal(t, ref, cb.Reference)
	assert.Equal(t, gateway.StatusFailed, cb.Status)
	assert.Equal(t, gateway.FailurePayerDeclined, cb.FailureCode)
	assert.Empty(t, paymentOf(t, f, ref).TxnID)
}

// recordingTB keeps what the fake reports instead of failing the test.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordingTB) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	errs := r.errors
	r.errors = nil
	return errs
}

// The fake's customer pays only a page that reached the merchant and is still open.
func TestCustomerMistakesAreReported(t *testing.T) {
	rec := &recordingTB{TB: t}
	f := orangefake.New(rec)
	c := newClient(t, f, nil)
	res, err := c.Collect(t.Context(), collectReq(gatewaytest.Reference()))
	require.NoError(t, err)
	page := res.NextAction.URL

	f.Pay(f.URL() + "/payment/pay_token/unknown")
	assert.Len(t, rec.take(), 1, "an unknown page")
	f.Pay(page)
	assert.Empty(t, rec.take())
	f.Decline(page)
	assert.Len(t, rec.take(), 1, "a payment that has ended")

	lost := gatewaytest.Reference()
	f.ForceNext(http.StatusGatewayTimeout, true, `{"code":504,"message":"Gateway Timeout"}`)
	_, err = c.Collect(t.Context(), collectReq(lost))
	require.Error(t, err)
	f.Pay(paymentOf(t, f, lost).PaymentURL)
	assert.Len(t, rec.take(), 1, "a page that never reached the merchant")

	f.SetSessionTTL(time.Millisecond)
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down", http.StatusInternalServerError)
	}))
	t.Cleanup(refusing.Close)
	req := collectReq(gatewaytest.Reference())
	req.CallbackURL = refusing.URL
	expiring, err := c.Collect(t.Context(), req)
	require.NoError(t, err)
	time.Sleep(5 * time.Millisecond)
	f.Pay(expiring.NextAction.URL)
	assert.Len(t, rec.take(), 1, "an expired session")
	err = f.Notify(expiring.NextAction.URL) // an expired payment is notified, EXPIRED
	assert.ErrorContains(t, err, "500", "our endpoint refused it")
	assert.Error(t, f.Notify("not a page"))
}

func TestForgedNotificationsAreRefused(t *testing.T) {
	f := newFake(t)
	memory := &gateway.MapMemory{}
	c := newClient(t, f, func(cfg *Config) { cfg.Memory = memory })
	ref := gatewaytest.Reference()
	_, err := c.Collect(t.Context(), collectReq(ref))
	require.NoError(t, err)
	notifToken := paymentOf(t, f, ref).NotifToken
	// a reverse key that names a payment whose notif_token is another (a corrupted Memory)
	other := gatewaytest.Reference()
	_, err = c.Collect(t.Context(), collectReq(other))
	require.NoError(t, err)
	require.NoError(t, memory.Remember(t.Context(), c.Name(), notifKey(paymentOf(t, f, other).NotifToken), []byte(`{"reference":"`+ref+`"}`)))

	for name, body := range map[string]string{
		"unknown notif_token":        `{"status":"SUCCESS","notif_token":"` + strings.Repeat("f", 32) + `","txnid":"MP1"}`,
		"notif_token of a pay_token": `{"status":"SUCCESS","notif_token":"` + paymentOf(t, f, ref).PayToken + `","txnid":"MP1"}`,
		"no notif_token":             `{"status":"SUCCESS","txnid":"MP1"}`,
		"mismatched reverse key":     `{"status":"SUCCESS","notif_token":"` + paymentOf(t, f, other).NotifToken + `","txnid":"MP1"}`,
		"unknown status":             `{"status":"REFUNDED","notif_token":"` + notifToken + `","txnid":"MP1"}`,
		"not JSON":                   `status=SUCCESS&notif_token=` + notifToken,
	} {
		_, err := c.ParseCallback(t.Context(), http.Header{}, []byte(body))
		if assert.Error(t, err, name) {
			assert.NotContains(t, err.Error(), notifToken, "%s: the token is not echoed", name)
		}
	}
	cb, err := c.ParseCallback(t.Context(), http.Header{}, []byte(`{"status":"FAILED","notif_token":"`+notifToken+`","txnid":""}`))
	require.NoError(t, err)
	assert.Equal(t, gateway.StatusFailed, cb.Status)
	assert.Equal(t, gateway.FailurePayerDeclined, cb.FailureCode)
	assert.Equal(t, ref, cb.Reference)
}
