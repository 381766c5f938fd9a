// The hand-written layer without the service: a fake fetch plays the API.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Webhook } from "standardwebhooks";
import {
	ConflictError,
	ConnectionError,
	InvalidRequestError,
	MONEY_MOVING_PATHS,
	NotFoundError,
	RateLimitError,
	ServiceUnavailableError,
	Sika,
	SikaError,
	ValidationError,
	WebhookVerificationError,
	verifyWebhook,
} from "../src/index.js";

type Handler = (request: Request, attempt: number) => Response | Promise<Response>;

/** A client whose fetch is handler; seen records every request it got (headers and body). */
function fake(handler: Handler, options: Record<string, unknown> = {}) {
	const seen: { method: string; url: string; headers: Headers; body: string }[] = [];
	const client = new Sika({
		baseUrl: "http://sika.test/api/v1",
		apiKey: "sk_test_unit",
		initialRetryDelayMs: 1,
		fetch: async (request) => {
			seen.push({ method: request.method, url: request.url, headers: request.headers, body: await request.text() });
			return handler(request, seen.length);
		},
		...options,
	});
	return { client, seen };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
	new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
const ok = (data: unknown, status = 200) => json(status, { success: true, data });
const fail = (status: number, code: string, message = "no", headers: Record<string, string> = {}) =>
	json(status, { success: false, error: { code, message } }, headers);
const payment = { id: "0b0c5f3e-3c57-4d5a-9d6f-000000000001", status: "PENDING" };
const softpay = { amount: "1000", currency: "XOF", country: "BJ", network: "MTN_BJ", customer_phone: "97000123", customer_name: "K" };

describe("credentials and idempotency keys", () => {
	test("the key is a Bearer credential on every call", async () => {
		const { client, seen } = fake(() => ok([]));
		await client.GET("/countries/");
		assert.equal(seen[0]!.headers.get("Authorization"), "Bearer sk_test_unit");
	});

	test("money-moving calls get an Idempotency-Key, other calls none", async () => {
		const { client, seen } = fake(() => ok(payment, 201));
		await client.POST("/payments/softpay/", { body: softpay });
		await client.POST("/payments/{id}/retry/", { params: { path: { id: payment.id } } });
		await client.POST("/checkout-sessions/", { body: { amount: "1000", currency: "XOF", customer_email: "a@b.c", customer_name: "K" } });
		await client.GET("/transactions/{id}/", { params: { path: { id: payment.id } } });
		const keys = seen.map((r) => r.headers.get("Idempotency-Key"));
		assert.match(keys[0]!, /^[0-9a-f-]{36}$/);
		assert.match(keys[1]!, /^[0-9a-f-]{36}$/);
		assert.notEqual(keys[0], keys[1], "a new key per call");
		assert.equal(keys[2], null, "checkout sessions do not take one");
		assert.equal(keys[3], null);
		assert.equal(MONEY_MOVING_PATHS.length, 9); // payout batches are the ninth
	});

	test("a key given by the caller is kept", async () => {
		const { client, seen } = fake(() => ok(payment, 201));
		await client.POST("/payouts/initialize/", {
			params: { header: { "Idempotency-Key": "order-42" } },
			body: { amount: "1000", currency: "XOF", country: "BJ", method: "MTN_BJ", recipient: "97000123" },
		});
		assert.equal(seen[0]!.headers.get("Idempotency-Key"), "order-42");
	});

	test("dashboard sessions send X-Environment and X-Merchant-Id", async () => {
		const { client, seen } = fake(() => ok({ count: 0, next: null, previous: null, results: [] }), { environment: "TEST", merchantId: "m-1" });
		await client.GET("/merchant-webhooks/");
		assert.equal(seen[0]!.headers.get("X-Environment"), "TEST");
		assert.equal(seen[0]!.headers.get("X-Merchant-Id"), "m-1");
	});
});

describe("retries", () => {
	test("429 with Retry-After, 503 and a network error are retried with the same key and body", async () => {
		const { client, seen } = fake((_, attempt) => {
			if (attempt === 1) return fail(429, "rate_limited", "slow down", { "Retry-After": "0" });
			if (attempt === 2) return fail(503, "service_unavailable");
			if (attempt === 3) throw new TypeError("fetch failed");
			return ok(payment, 201);
		}, { maxRetries: 3 });
		const p = await client.POST("/payments/softpay/", { body: softpay });
		assert.equal(p.id, payment.id);
		assert.equal(seen.length, 4);
		assert.equal(new Set(seen.map((r) => r.headers.get("Idempotency-Key"))).size, 1, "one key for every try");
		assert.ok(seen.every((r) => r.body === JSON.stringify(softpay)));
	});

	test("retries are bounded", async () => {
		const { client, seen } = fake(() => fail(503, "service_unavailable", "down", { "Retry-After": "0" }), { maxRetries: 2 });
		await assert.rejects(client.POST("/payments/softpay/", { body: softpay }), (err: unknown) => {
			assert.ok(err instanceof ServiceUnavailableError);
			assert.equal(err.code, "service_unavailable");
			assert.equal(err.status, 503);
			return true;
		});
		assert.equal(seen.length, 3);
	});

	test("a Retry-After longer than maxRetryDelayMs is not waited for", async () => {
		const { client, seen } = fake(() => fail(429, "rate_limited", "later", { "Retry-After": "60" }), { maxRetryDelayMs: 1000 });
		const started = Date.now();
		await assert.rejects(client.GET("/networks/"), (err: unknown) => {
			assert.ok(err instanceof RateLimitError);
			assert.equal(err.retryAfter, 60);
			return true;
		});
		assert.equal(seen.length, 1);
		assert.ok(Date.now() - started < 1000);
	});

	test("a POST without Idempotency-Key is not repeated after a network error or a 503", async () => {
		for (const answer of [() => { throw new TypeError("socket hang up"); }, () => fail(503, "service_unavailable")]) {
			const { client, seen } = fake(answer);
			await assert.rejects(
				client.POST("/checkout-sessions/", { body: { amount: "1000", currency: "XOF", customer_email: "a@b.c", customer_name: "K" } }),
				(err: unknown) => err instanceof SikaError && ["connection_error", "service_unavailable"].includes(err.code),
			);
			assert.equal(seen.length, 1);
		}
	});

	test("409 idempotency_key_in_use is retried with the same key and body, Retry-After honoured, within maxRetries", async () => {
		const inUse = (headers: Record<string, string> = {}) => fail(409, "idempotency_key_in_use", "still being processed", headers);
		const { client, seen } = fake((_, attempt) => (attempt === 1 ? inUse() : attempt === 2 ? inUse({ "Retry-After": "1" }) : ok(payment, 201)));
		const started = Date.now();
		const p = await client.POST("/payments/softpay/", { body: softpay });
		assert.equal(p.id, payment.id);
		assert.equal(seen.length, 3);
		assert.equal(new Set(seen.map((r) => r.headers.get("Idempotency-Key"))).size, 1, "one key for every try");
		assert.ok(seen.every((r) => r.body === JSON.stringify(softpay)));
		assert.ok(Date.now() - started >= 1000, "Retry-After honoured");

		const spent = fake(() => inUse(), { maxRetries: 2 });
		await assert.rejects(spent.client.POST("/payments/softpay/", { body: softpay }), (err: unknown) => {
			assert.ok(err instanceof ConflictError);
			assert.equal(err.code, "idempotency_key_in_use");
			assert.equal(err.message, "still being processed", "the body read to tell the code is the error's");
			return true;
		});
		assert.equal(spent.seen.length, 3, "the first try and maxRetries");
	});

	test("no other 409, nor a 409 idempotency_key_in_use without an Idempotency-Key or with maxRetries 0, is retried", async () => {
		const cases: [() => Response, (c: Sika) => Promise<unknown>, Record<string, unknown>][] = [
			[() => fail(409, "idempotency_key_reused", "other body"), (c) => c.POST("/payments/softpay/", { body: softpay }), {}],
			[() => fail(409, "checkout_payment_in_progress"), (c) => c.POST("/payments/softpay/", { body: softpay }), {}],
			[() => fail(409, "idempotency_key_in_use"), (c) => c.POST("/checkout-sessions/", { body: { amount: "1000", currency: "XOF", customer_email: "a@b.c", customer_name: "K" } }), {}],
			[() => fail(409, "idempotency_key_in_use"), (c) => c.POST("/payments/softpay/", { body: softpay }), { maxRetries: 0 }],
		];
		for (const [answer, call, options] of cases) {
			const { client, seen } = fake(answer, options);
			await assert.rejects(call(client), (err: unknown) => err instanceof ConflictError && err.status === 409);
			assert.equal(seen.length, 1);
		}
	});

	test("the caller's abort stops the retries and stays an abort", async () => {
		const controller = new AbortController();
		const { client, seen } = fake(() => fail(503, "service_unavailable", "down", { "Retry-After": "5" }), { maxRetries: 5 });
		setTimeout(() => controller.abort(), 50);
		await assert.rejects(client.GET("/networks/", { signal: controller.signal }), (err: unknown) => (err as Error).name === "AbortError");
		assert.equal(seen.length, 1);
	});

	test("no answer at all is a ConnectionError", async () => {
		const { client } = fake(() => { throw new TypeError("ECONNREFUSED"); }, { maxRetries: 1 });
		await assert.rejects(client.GET("/networks/"), (err: unknown) => {
			assert.ok(err instanceof ConnectionError);
			assert.equal(err.status, 0);
			assert.equal(err.code, "connection_error");
			return true;
		});
	});
});

describe("errors", () => {
	test("a business error carries its code, message, status and request id", async () => {
		const { client } = fake(() => fail(404, "not_found", "Transaction not found.", { "X-Request-Id": "req-1" }));
		await assert.rejects(client.GET("/transactions/{id}/", { params: { path: { id: payment.id } } }), (err: unknown) => {
			assert.ok(err instanceof NotFoundError && err instanceof SikaError && err instanceof Error);
			assert.equal(err.name, "NotFoundError");
			assert.equal(err.code, "not_found");
			assert.equal(err.message, "Transaction not found.");
			assert.equal(err.status, 404);
			assert.equal(err.requestId, "req-1");
			assert.deepEqual(err.details, {});
			return true;
		});
	});

	test("a validation error maps its fields in details", async () => {
		const { client } = fake(() => json(400, { success: false, error: { amount: ["Must be greater than 0."], currency: ["Required."] } }));
		await assert.rejects(client.POST("/payments/softpay/", { body: softpay }), (err: unknown) => {
			assert.ok(err instanceof ValidationError);
			assert.equal(err.code, "validation_error");
			assert.deepEqual(err.details, { amount: ["Must be greater than 0."], currency: ["Required."] });
			assert.match(err.message, /amount: Must be greater than 0\./);
			return true;
		});
	});

	test("invalid_json is a 400 with a code", async () => {
		const { client } = fake(() => fail(400, "invalid_json"));
		await assert.rejects(client.POST("/payments/softpay/", { body: softpay }), InvalidRequestError);
	});

	test("an answer without the envelope is unexpected_response", async () => {
		const { client } = fake(() => new Response("<html>bad gateway</html>", { status: 409 }));
		await assert.rejects(client.GET("/networks/"), (err: unknown) => err instanceof ConflictError && err.code === "unexpected_response");
	});
});

describe("lists", () => {
	test("list follows next with its query, cursor and page lists alike", async () => {
		const pages: Record<string, unknown> = {
			"": { next: "http://public.example/api/v1/transactions/?cursor=c1&status=SUCCESS", previous: null, results: [{ id: "a" }, { id: "b" }] },
			c1: { next: "http://public.example/api/v1/transactions/?cursor=c2&status=SUCCESS", previous: "x", results: [{ id: "c" }] },
			c2: { next: null, previous: "y", results: [{ id: "d" }] },
		};
		const { client, seen } = fake((request) => ok(pages[new URL(request.url).searchParams.get("cursor") ?? ""]));
		const ids: string[] = [];
		for await (const t of client.list("/transactions/", { params: { query: { status: "SUCCESS" } } })) ids.push(t.id);
		assert.deepEqual(ids, ["a", "b", "c", "d"]);
		assert.deepEqual(seen.map((r) => new URL(r.url).search), ["?status=SUCCESS", "?cursor=c1&status=SUCCESS", "?cursor=c2&status=SUCCESS"]);
		assert.ok(seen.every((r) => r.url.startsWith("http://sika.test/api/v1/transactions/")), "the client's base URL, whatever host next names");
	});
});

describe("webhooks", () => {
	const secret = "whsec_" + Buffer.from("0123456789abcdef0123456789abcdef").toString("base64");
	const event = { id: "evt_1", type: "transaction.succeeded", created_at: "2026-01-31T09:30:00Z", environment: "TEST", data: { id: "t" } };
	const body = JSON.stringify(event);
	const signed = (secrets: string[], payload = body, at = new Date()) => {
		const sigs = secrets.map((s) => new Webhook(s).sign("evt_1", at, payload)).join(" ");
		return { "webhook-id": "evt_1", "webhook-timestamp": String(Math.floor(at.getTime() / 1000)), "webhook-signature": sigs };
	};

	test("a signed delivery verifies, from fetch Headers or Node headers", () => {
		assert.deepEqual(verifyWebhook(secret, body, signed([secret])), event);
		assert.deepEqual(verifyWebhook(secret, new TextEncoder().encode(body), new Headers(signed([secret]))), event);
	});

	test("during a rotation either secret verifies", () => {
		const other = "whsec_" + Buffer.from("another secret of 32 bytes......").toString("base64");
		assert.deepEqual(verifyWebhook(other, body, signed([secret, other])), event);
	});

	test("a changed body, another secret or a stale timestamp is refused", () => {
		assert.throws(() => verifyWebhook(secret, body.replace("TEST", "LIVE"), signed([secret])), WebhookVerificationError);
		assert.throws(() => verifyWebhook("whsec_" + Buffer.from("x".repeat(32)).toString("base64"), body, signed([secret])), WebhookVerificationError);
		assert.throws(() => verifyWebhook(secret, body, signed([secret], body, new Date(Date.now() - 10 * 60_000))), WebhookVerificationError);
	});
});
