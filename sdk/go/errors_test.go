package sika

// Every error code of the contract that a client can provoke, provoked against the service and
// answered as an *Error with its code and status. The last step checks that the codes provoked
// are all those of the served document's Error schema but internal_error (a bug), and that
// each has its generated ErrorCode constant.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestErrorCodesFromTheService(t *testing.T) {
	dev := service(t)
	ctx := context.Background()
	provoked := map[ErrorCode]bool{}
	// expect asserts that err is an *Error of code and status (errors.As and errors.Is alike),
	// with a message and a request id, and records the code.
	expect := func(t *testing.T, err error, code ErrorCode, status int) *Error {
		t.Helper()
		require.Error(t, err, "want %s", code)
		e := asError(t, err)
		assert.Equal(t, code, e.Code, e.Message)
		assert.Equal(t, status, e.StatusCode)
		assert.True(t, errors.Is(err, code))
		assert.NotEmpty(t, e.Message)
		assert.NotEmpty(t, e.RequestID, "X-Request-Id")
		provoked[code] = true
		return e
	}
	// c: the demo merchant, TEST, no retries, so that each error is seen as answered.
	c := client(t, dev, Options{DisableRetries: true})
	session := dashboard(t, ctx, dev, dev.Merchant.Email, dev.Merchant.Password, Options{DisableRetries: true})
	pay := func(suffix string) UUID {
		resp, err := c.SoftpayWithResponse(ctx, nil, softpayBody(suffix))
		require.NoError(t, err)
		return final(t, ctx, c, resp.JSON201.Data.Id).Id
	}
	succeeded, declined := pay("123"), pay("002")
	payout := func(mod func(*InitializePayoutJSONRequestBody)) InitializePayoutJSONRequestBody {
		b := InitializePayoutJSONRequestBody{Amount: "1000", Currency: "XOF", Country: "BJ", Method: "MTN_BJ", Recipient: "97000123"}
		if mod != nil {
			mod(&b)
		}
		return b
	}
	softpay := func(mod func(*SoftpayJSONRequestBody)) SoftpayJSONRequestBody {
		b := softpayBody("123")
		mod(&b)
		return b
	}

	t.Run("400 invalid_json and validation errors with their fields", func(t *testing.T) {
		_, err := c.SoftpayWithBodyWithResponse(ctx, nil, "application/json", strings.NewReader(`{"amount": `))
		expect(t, err, ErrorCodeInvalidJson, 400)

		_, err = c.SoftpayWithResponse(ctx, nil, softpay(func(b *SoftpayJSONRequestBody) { b.Amount, b.Currency = "-5", "" }))
		e := expect(t, err, CodeValidation, 400)
		assert.Contains(t, strings.Join(e.Fields["amount"], " "), "greater than 0", e.Fields)
		assert.NotEmpty(t, e.Fields["currency"], e.Fields)

		body, _ := json.Marshal(map[string]any{"amount": "1000", "currency": "XOF", "country": "BJ", "network": "MTN_BJ",
			"customer_phone": "97000123", "customer_name": "K", "bogus_field": 1})
		_, err = c.SoftpayWithBodyWithResponse(ctx, nil, "application/json", bytes.NewReader(body))
		e = expect(t, err, CodeValidation, 400)
		assert.Contains(t, strings.Join(e.Fields["bogus_field"], " "), "Unknown field", e.Fields)
	})

	t.Run("401 authentication_required, invalid_credentials, token_expired", func(t *testing.T) {
		anonymous, err := New(Options{BaseURL: dev.BaseURL, DisableRetries: true})
		require.NoError(t, err)
		_, err = anonymous.ListTransactionsWithResponse(ctx, nil)
		expect(t, err, ErrorCodeAuthenticationRequired, 401)
		_, err = client(t, dev, Options{APIKey: "sk_test_" + strings.Repeat("x", 43), DisableRetries: true}).ListTransactionsWithResponse(ctx, nil)
		expect(t, err, ErrorCodeInvalidCredentials, 401)
		_, err = client(t, dev, Options{APIKey: fixture(t, "EXPIRED_TOKEN"), DisableRetries: true}).ListMemberMerchantsWithResponse(ctx)
		expect(t, err, ErrorCodeTokenExpired, 401)
	})

	t.Run("403 api_key_scope_forbidden, dashboard_only, admin_only", func(t *testing.T) {
		payin := client(t, dev, Options{APIKey: dev.Merchant.APIKeys.TestPayin, DisableRetries: true})
		_, err := payin.InitializePayoutWithResponse(ctx, nil, payout(nil))
		expect(t, err, ErrorCodeApiKeyScopeForbidden, 403)
		_, err = c.CreateWebhookWithResponse(ctx, nil, CreateWebhookJSONRequestBody{Url: "http://127.0.0.1:9/x"})
		expect(t, err, ErrorCodeDashboardOnly, 403)
		_, err = session.ListStuckTransactionsWithResponse(ctx, nil)
		expect(t, err, ErrorCodeAdminOnly, 403)
	})

	t.Run("403 ip_not_whitelisted, merchant_inactive, merchant_suspended (a merchant registered here)", func(t *testing.T) {
		anonymous, err := New(Options{BaseURL: dev.BaseURL})
		require.NoError(t, err)
		registered, err := anonymous.RegisterWithResponse(ctx, RegisterJSONRequestBody{
			Email: Email("sdk-go-" + uuid.NewString() + "@example.com"), Password: "a long enough password",
			FullName: "Ama Owusu", BusinessName: "Owusu Foods", Country: "BJ",
		})
		require.NoError(t, err)
		own := client(t, dev, Options{APIKey: registered.JSON201.Data.AccessToken})
		testKey, err := own.CreateAPIKeyWithResponse(ctx, nil, CreateAPIKeyJSONRequestBody{Scope: ScopeBOTH, Environment: ptr("TEST"), Name: ptr("sdk")})
		require.NoError(t, err)
		liveKey, err := own.CreateAPIKeyWithResponse(ctx, nil, CreateAPIKeyJSONRequestBody{Scope: ScopeBOTH, Environment: ptr("LIVE"), Name: ptr("sdk")})
		require.NoError(t, err)
		test := client(t, dev, Options{APIKey: testKey.JSON201.Data.Key, DisableRetries: true})
		live := client(t, dev, Options{APIKey: liveKey.JSON201.Data.Key, DisableRetries: true})
		_, err = test.InitializePayoutWithResponse(ctx, nil, payout(nil))
		expect(t, err, ErrorCodeIpNotWhitelisted, 403)
		_, err = live.ListTransactionsWithResponse(ctx, nil)
		expect(t, err, ErrorCodeMerchantInactive, 403)

		admin := dashboard(t, ctx, dev, dev.Admin.Email, dev.Admin.Password, Options{})
		reason := "an SDK test of merchant_suspended"
		_, err = admin.SuspendMerchantWithResponse(ctx, registered.JSON201.Data.Merchants[0].Id, SuspendMerchantJSONRequestBody{Reason: &reason})
		require.NoError(t, err)
		_, err = test.ListTransactionsWithResponse(ctx, nil)
		expect(t, err, ErrorCodeMerchantSuspended, 403)
	})

	t.Run("404 not_found, 405 method_not_allowed", func(t *testing.T) {
		_, err := c.GetTransactionWithResponse(ctx, uuid.New(), nil)
		expect(t, err, ErrorCodeNotFound, 404)
		req, err := http.NewRequestWithContext(ctx, http.MethodDelete, dev.BaseURL+"/transactions/", nil)
		require.NoError(t, err)
		_, err = c.doer.Do(req)
		expect(t, err, ErrorCodeMethodNotAllowed, 405)
	})

	newSession := func(t *testing.T) CheckoutSessionCreated {
		resp, err := c.CreateCheckoutSessionWithResponse(ctx, nil, CreateCheckoutSessionJSONRequestBody{
			Amount: "1500", Currency: "XOF", Country: ptr("BJ"), CustomerEmail: "koffi@example.com", CustomerName: "Koffi",
		})
		require.NoError(t, err)
		return resp.JSON201.Data
	}
	payHosted := func(slug, number string) (*PayCheckoutSessionResponse, error) {
		return c.PayCheckoutSessionWithResponse(ctx, slug, PayCheckoutSessionJSONRequestBody{Network: "MTN_BJ", CustomerPhone: number})
	}

	t.Run("409 not_pending, session_not_payable (a cancelled checkout session)", func(t *testing.T) {
		s := newSession(t)
		_, err := c.CancelCheckoutSessionWithResponse(ctx, s.Id, nil)
		require.NoError(t, err)
		_, err = c.CancelCheckoutSessionWithResponse(ctx, s.Id, nil)
		expect(t, err, ErrorCodeNotPending, 409)
		_, err = payHosted(s.Slug, "97000123")
		expect(t, err, ErrorCodeSessionNotPayable, 409)
	})

	t.Run("409 checkout_payment_in_progress: a second payment while the first is PENDING", func(t *testing.T) {
		s := newSession(t)
		first, err := payHosted(s.Slug, "97000009") // SUCCESS after about 20 s
		require.NoError(t, err)
		assert.Equal(t, TransactionStatusPENDING, first.JSON201.Data.Status)
		_, err = payHosted(s.Slug, "97000123")
		expect(t, err, ErrorCodeCheckoutPaymentInProgress, 409)
	})

	t.Run("409 not_failed, outcome_unresolved (retries)", func(t *testing.T) {
		_, err := c.RetryPaymentWithResponse(ctx, succeeded, nil, RetryPaymentJSONRequestBody{})
		expect(t, err, ErrorCodeNotFailed, 409)
		resp, err := c.SoftpayWithResponse(ctx, nil, softpayBody("011")) // paid after the push lifetime (5 s here)
		require.NoError(t, err)
		failed := final(t, ctx, c, resp.JSON201.Data.Id)
		assert.Equal(t, "expired", failed.FailureCode)
		_, err = c.RetryPaymentWithResponse(ctx, failed.Id, nil, RetryPaymentJSONRequestBody{})
		expect(t, err, ErrorCodeOutcomeUnresolved, 409)
	})

	t.Run("409 idempotency_key_reused, idempotency_key_in_use", func(t *testing.T) {
		key := uuid.NewString()
		body := softpayBody("123")
		_, err := c.SoftpayWithResponse(ctx, &SoftpayParams{IdempotencyKey: &key}, body)
		require.NoError(t, err)
		body.Amount = "2000"
		_, err = c.SoftpayWithResponse(ctx, &SoftpayParams{IdempotencyKey: &key}, body)
		expect(t, err, ErrorCodeIdempotencyKeyReused, 409)

		// The same request sent ten times at once: one runs, the others find the key in use (or,
		// once it finished, its stored answer). A few rounds make the race certain enough.
		var inUse error
		for round := 0; round < 20 && inUse == nil; round++ {
			key, body := uuid.NewString(), softpayBody("123")
			var mu sync.Mutex
			var wg sync.WaitGroup
			ids := map[UUID]bool{}
			for range 10 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp, err := c.SoftpayWithResponse(ctx, &SoftpayParams{IdempotencyKey: &key}, body)
					mu.Lock()
					defer mu.Unlock()
					if err == nil {
						ids[resp.JSON201.Data.Id] = true
					} else if errors.Is(err, ErrorCodeIdempotencyKeyInUse) {
						inUse = err
					}
				}()
			}
			wg.Wait()
			assert.LessOrEqual(t, len(ids), 1, "one payment whatever the race")
		}
		expect(t, inUse, ErrorCodeIdempotencyKeyInUse, 409)
	})

	t.Run("409 usage_limit_reached, link_inactive (payment links)", func(t *testing.T) {
		link := func(active bool, limit *int) string {
			resp, err := c.CreatePaymentLinkWithResponse(ctx, nil, CreatePaymentLinkJSONRequestBody{
				Name: "sdk/go", Currency: "XOF", Amount: ptr("1000"), Country: ptr("BJ"), UsageLimit: limit, IsActive: &active,
			})
			require.NoError(t, err)
			return resp.JSON201.Data.Slug
		}
		payLink := func(slug string) error {
			_, err := c.PayPaymentLinkWithResponse(ctx, slug, PayPaymentLinkJSONRequestBody{Network: "MTN_BJ", CustomerPhone: "97000123", CustomerName: ptr("Koffi")})
			return err
		}
		once := link(true, ptr(1))
		require.NoError(t, payLink(once))
		expect(t, payLink(once), ErrorCodeUsageLimitReached, 409)
		expect(t, payLink(link(false, nil)), ErrorCodeLinkInactive, 409)
	})

	t.Run("413 request_too_large, file_too_large; 415 unsupported_media_type", func(t *testing.T) {
		_, err := c.SoftpayWithResponse(ctx, nil, softpay(func(b *SoftpayJSONRequestBody) { b.Description = ptr(strings.Repeat("x", 1_100_000)) }))
		expect(t, err, ErrorCodeRequestTooLarge, 413)

		upload := func(content []byte, name string) error {
			var body bytes.Buffer
			form := multipart.NewWriter(&body)
			part, err := form.CreateFormFile("file", name)
			require.NoError(t, err)
			_, _ = part.Write(content)
			require.NoError(t, form.Close())
			_, err = session.UploadKYCFileWithBodyWithResponse(ctx, nil, form.FormDataContentType(), &body)
			return err
		}
		expect(t, upload([]byte("just some text, not a document"), "id.pdf"), ErrorCodeUnsupportedMediaType, 415)
		big := make([]byte, 10*1024*1024+1)
		copy(big, "%PDF-1.4\n")
		expect(t, upload(big, "big.pdf"), ErrorCodeFileTooLarge, 413)
	})

	t.Run("422 currency_country_mismatch, insufficient_balance, wallet_frozen", func(t *testing.T) {
		_, err := c.InitializePayoutWithResponse(ctx, nil, payout(func(b *InitializePayoutJSONRequestBody) { b.Currency = "XAF" }))
		expect(t, err, ErrorCodeCurrencyCountryMismatch, 422)
		_, err = c.InitializePayoutWithResponse(ctx, nil, payout(func(b *InitializePayoutJSONRequestBody) { b.Amount = "900000" }))
		expect(t, err, ErrorCodeInsufficientBalance, 422)
		frozen := client(t, dev, Options{APIKey: fixture(t, "FROZEN_KEY"), DisableRetries: true})
		_, err = frozen.InitializePayoutWithResponse(ctx, nil, payout(nil))
		expect(t, err, ErrorCodeWalletFrozen, 422)
	})

	t.Run("422 network_unavailable, network_country_mismatch, otp_required, amount_out_of_range", func(t *testing.T) {
		// No LIVE operator is configured under `sika dev`: a LIVE payment has nowhere to go.
		live := client(t, dev, Options{APIKey: dev.Merchant.APIKeys.LiveBoth, DisableRetries: true})
		_, err := live.SoftpayWithResponse(ctx, nil, softpayBody("123"))
		expect(t, err, ErrorCodeNetworkUnavailable, 422)
		_, err = c.SoftpayWithResponse(ctx, nil, softpay(func(b *SoftpayJSONRequestBody) { b.Country, b.CustomerPhone = "CI", "0707000123" }))
		expect(t, err, ErrorCodeNetworkCountryMismatch, 422)
		_, err = c.SoftpayWithResponse(ctx, nil, softpay(func(b *SoftpayJSONRequestBody) {
			b.Country, b.Network, b.CustomerPhone = "SN", "ORANGE_SN", "770000123"
		}))
		expect(t, err, ErrorCodeOtpRequired, 422)
		_, err = c.SoftpayWithResponse(ctx, nil, softpay(func(b *SoftpayJSONRequestBody) { b.Amount = "50000000" }))
		expect(t, err, ErrorCodeAmountOutOfRange, 422)
	})

	t.Run("422 payout_method_unverified, invoice_unavailable", func(t *testing.T) {
		method, err := session.CreatePayoutMethodWithResponse(ctx, nil, CreatePayoutMethodJSONRequestBody{
			Type: CreatePayoutMethodJSONBodyTypeMOBILEMONEY, Network: ptr("MTN_BJ"), PhoneNumber: ptr("97000123"), Label: ptr("sdk/go"),
		})
		require.NoError(t, err)
		_, err = c.CreateSettlementWithResponse(ctx, nil, CreateSettlementJSONRequestBody{
			Amount: "1000", Currency: "XOF", Country: "BJ", PayoutMethod: method.JSON201.Data.Id,
		})
		expect(t, err, ErrorCodePayoutMethodUnverified, 422)
		_, err = c.GetTransactionInvoiceWithResponse(ctx, declined, nil)
		expect(t, err, ErrorCodeInvoiceUnavailable, 422)
	})

	t.Run("429 rate_limited with Retry-After (a merchant limited to 2 requests a minute)", func(t *testing.T) {
		// The client retries a 429 whose Retry-After is short; this one is not (up to a minute).
		limited := client(t, dev, Options{APIKey: fixture(t, "LIMITED_KEY"), MaxRetryDelay: 2 * time.Second})
		var err error
		for i := 0; i < 6 && err == nil; i++ {
			_, err = limited.ListNetworksWithResponse(ctx, nil)
		}
		e := expect(t, err, ErrorCodeRateLimited, 429)
		assert.Positive(t, e.RetryAfter)
	})

	t.Run("503 service_unavailable: a burst over the service's collection pace", func(t *testing.T) {
		var unavailable error
		for round := 0; round < 5 && unavailable == nil; round++ {
			var mu sync.Mutex
			var wg sync.WaitGroup
			for range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := c.SoftpayWithResponse(ctx, nil, softpayBody("123")); err != nil {
						mu.Lock()
						unavailable = err
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
		}
		e := expect(t, unavailable, ErrorCodeServiceUnavailable, 503)
		assert.GreaterOrEqual(t, e.RetryAfter, time.Second)
	})

	t.Run("409 not_refundable, 422 refund_exceeds_payment (refunds)", func(t *testing.T) {
		_, err := c.CreateRefundWithResponse(ctx, nil, CreateRefundJSONRequestBody{Transaction: declined})
		expect(t, err, ErrorCodeNotRefundable, 409)
		tooMuch := "1000000"
		_, err = c.CreateRefundWithResponse(ctx, nil, CreateRefundJSONRequestBody{Transaction: succeeded, Amount: &tooMuch})
		expect(t, err, ErrorCodeRefundExceedsPayment, 422)
	})

	// Codes a merchant's client cannot meet here: staff decisions (the api package's
	// TestStaffRoleBoundaries and TestTwoPersonRule provoke them) and a refund on a network with
	// neither an operator refund nor payouts (the sandbox pays out on every network; the
	// activities' refund tests provoke it with Orange WebPay).
	notForThisClient := map[ErrorCode]bool{ErrorCodeRoleForbidden: true, ErrorCodeSelfApprovalForbidden: true,
		ErrorCodeNotAwaitingApproval: true, ErrorCodeRefundUnavailable: true}

	t.Run("every code of the contract a client can provoke was provoked above", func(t *testing.T) {
		resp, err := http.Get(dev.BaseURL + "/openapi.json")
		require.NoError(t, err)
		defer resp.Body.Close()
		var doc struct {
			Components struct {
				Schemas struct {
					Error struct {
						Properties struct {
							Code struct {
								Enum []ErrorCode `json:"enum"`
							} `json:"code"`
						} `json:"properties"`
					} `json:"Error"`
				} `json:"schemas"`
			} `json:"components"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&doc))
		contract := doc.Components.Schemas.Error.Properties.Code.Enum
		require.NotEmpty(t, contract)
		var missing []ErrorCode
		for _, code := range contract {
			assert.True(t, code.Valid(), "%s has its generated ErrorCode constant", code)
			if code != ErrorCodeInternalError && !notForThisClient[code] && !provoked[code] {
				missing = append(missing, code)
			}
		}
		assert.Empty(t, missing, "every error code of the contract that a client can provoke is provoked here")
	})
}
