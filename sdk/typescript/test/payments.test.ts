// Collections, a payout, idempotent replay, concurrent tries of one key and cursor iteration
// against the service (sandbox).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { describe } from "node:test";
import { final, serviceTest as test, sika, softpayBody } from "./helpers.js";

describe("payments against the service", () => {
	test("softpay reaches SUCCESS (a number ending 123)", async () => {
		const client = sika();
		const p = await client.POST("/payments/softpay/", { body: softpayBody("123") });
		assert.equal(p.status, "PENDING");
		assert.equal(p.next_action?.type, "ussd_push");
		const t = await final(client, p.id);
		assert.equal(t.status, "SUCCESS");
		assert.equal(t.attempts.length, 1);
	});

	test("a declined payment (001) is retried on another number and succeeds", async () => {
		const client = sika();
		const p = await client.POST("/payments/softpay/", { body: softpayBody("001") });
		const failed = await final(client, p.id);
		assert.equal(failed.status, "FAILED");
		assert.equal(failed.failure_code, "payer_declined");
		const again = await client.POST("/payments/{id}/retry/", { params: { path: { id: p.id } }, body: { customer_phone: "97000123" } });
		assert.equal(again.id, p.id, "the same transaction");
		assert.equal(again.status, "PENDING");
		const t = await final(client, p.id);
		assert.equal(t.status, "SUCCESS");
		assert.equal(t.attempts.length, 2, "a new attempt");
	});

	test("a payout is paid from the wallet a collection funded", async () => {
		const client = sika();
		const funding = await client.POST("/payments/softpay/", { body: softpayBody("123", { amount: "10000" }) });
		assert.equal((await final(client, funding.id)).status, "SUCCESS");
		const before = await client.GET("/merchant-balances/");
		const bj = before.results.find((w) => w.country === "BJ");
		assert.ok(bj && Number(bj.available_amount) >= 2000, `BJ wallet funded: ${JSON.stringify(bj)}`);
		const payout = await client.POST("/payouts/initialize/", {
			body: { amount: "2000", currency: "XOF", country: "BJ", method: "MTN_BJ", recipient: "97000123", recipient_name: "Ama" },
		});
		const t = await final(client, payout.id);
		assert.equal(t.status, "SUCCESS");
		assert.equal(t.flow_direction, "OUTBOUND");
	});

	test("the same Idempotency-Key answers the same transaction, Idempotent-Replayed", async () => {
		const client = sika();
		const key = randomUUID();
		const body = softpayBody("123");
		const first = await client.client.POST("/payments/softpay/", { params: { header: { "Idempotency-Key": key } }, body });
		const again = await client.client.POST("/payments/softpay/", { params: { header: { "Idempotency-Key": key } }, body });
		assert.equal(first.response.status, 201);
		assert.equal(again.response.status, 201);
		assert.equal(first.response.headers.get("Idempotent-Replayed"), null);
		assert.equal(again.response.headers.get("Idempotent-Replayed"), "true");
		assert.equal(again.data!.data.id, first.data!.data.id);
		// Through the unwrapping methods too.
		const third = await client.POST("/payments/softpay/", { params: { header: { "Idempotency-Key": key } }, body });
		assert.equal(third.id, first.data!.data.id);
		const found = [];
		for await (const t of client.list("/transactions/", { params: { query: { search: body.customer_phone } } })) {
			if (t.id === third.id) found.push(t);
		}
		assert.equal(found.length, 1, "one transaction");
	});

	test("tries of one Idempotency-Key at once answer the one payment (409 idempotency_key_in_use retried)", async () => {
		// Ten calls with the same key at once, as a merchant's retries after a timeout may while
		// the first try still runs: the service answers all but one 409 idempotency_key_in_use
		// meanwhile (errors.test.ts sees it without retries), which the client retries until it
		// gets the stored answer. A few rounds make the overlap certain enough; enough retries for
		// the first try to finish on a loaded machine (0.1 s doubling to 3.2 s).
		const client = sika({ maxRetries: 6 });
		for (let round = 0; round < 5; round++) {
			const header = { "Idempotency-Key": randomUUID() };
			const body = softpayBody("123");
			const results = await Promise.allSettled(Array.from({ length: 10 }, () => client.POST("/payments/softpay/", { params: { header }, body })));
			const failed = results.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
			assert.deepEqual(failed, [], `round ${round}: every call answered`);
			const ids = new Set(results.flatMap((r) => (r.status === "fulfilled" ? [r.value.id] : [])));
			assert.equal(ids.size, 1, `round ${round}: the one payment`);
			const found = [];
			for await (const t of client.list("/transactions/", { params: { query: { search: body.customer_phone } } })) found.push(t.id);
			assert.deepEqual(found, [...ids], `round ${round}: one transaction`);
		}
	});

	test("cursor iteration walks 250 transactions, each once", async () => {
		// 250 collections, 25 at a time. The service paces collections (50/s here): a burst is
		// answered 503 with Retry-After, which the client retries with the same key, so there are
		// exactly 250 transactions afterwards, none twice. The numbers end in 003 (refused by the
		// operator at initiation): the 250 workflows end at once instead of each waiting for a
		// callback, so the tests after this one do not wait behind them in the worker's queue.
		const client = sika({ maxRetries: 10 });
		const run = randomUUID().slice(0, 8);
		const created: string[] = [];
		const started = Date.now();
		let next = 0;
		await Promise.all(
			Array.from({ length: 25 }, async () => {
				while (next < 250) {
					next++;
					const p = await client.POST("/payments/softpay/", { body: softpayBody("003", { customer_name: `Cursor ${run}` }) });
					created.push(p.id);
				}
			}),
		);
		assert.equal(created.length, 250);
		console.log(`# created 250 payments in ${Date.now() - started} ms`);

		const seen: string[] = [];
		let pages = 0;
		for await (const page of client.pages("/transactions/", { params: { query: { search: `Cursor ${run}`, page_size: 40 } } })) {
			pages++;
			assert.ok(page.results.length <= 40);
			for (const t of page.results) seen.push(t.id);
		}
		assert.equal(pages, 7, "250 / 40 → 7 pages");
		assert.equal(seen.length, 250);
		assert.equal(new Set(seen).size, 250, "no transaction twice");
		assert.deepEqual([...seen].sort(), [...created].sort());

		let count = 0;
		for await (const t of client.list("/transactions/", { params: { query: { search: `Cursor ${run}`, page_size: 200 } } })) {
			assert.equal(t.customer_name, `Cursor ${run}`);
			count++;
		}
		assert.equal(count, 250);
	});
});
