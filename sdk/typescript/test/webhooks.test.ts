// A webhook endpoint on a local HTTP server receives the events of a payment, signed by the
// service, and verifies them with verifyWebhook (standardwebhooks).
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { describe } from "node:test";
import { WebhookVerificationError, verifyWebhook, type WebhookEvent } from "../src/index.js";
import { dashboard, dev, eventually, final, serviceTest as test, sika, softpayBody } from "./helpers.js";

describe("webhooks from the service", () => {
	test("a payment's transaction.succeeded is delivered, signed, and verifies", async () => {
		const deliveries: { headers: IncomingHttpHeaders; body: string }[] = [];
		const server = createServer((req, res) => {
			const chunks: Buffer[] = [];
			req.on("data", (c: Buffer) => chunks.push(c));
			req.on("end", () => {
				deliveries.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
				res.writeHead(204).end();
			});
		});
		await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
		const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
		const session = await dashboard(dev!.merchant.email, dev!.merchant.password);
		const endpoint = await session.POST("/merchant-webhooks/", { body: { url, description: "sdk test" } });
		try {
			assert.match(endpoint.signing_secret, /^whsec_/);
			const client = sika();
			const p = await client.POST("/payments/softpay/", { body: softpayBody("123") });
			assert.equal((await final(client, p.id)).status, "SUCCESS");

			const event = await eventually("transaction.succeeded delivered", async () => {
				for (const d of deliveries) {
					const e = verifyWebhook(endpoint.signing_secret, d.body, d.headers);
					if (e.type === "transaction.succeeded" && (e.data as { id?: string }).id === p.id) return { e, d };
				}
				return undefined;
			});
			const e: WebhookEvent = event.e;
			assert.equal(e.environment, "TEST");
			assert.equal(event.d.headers["webhook-id"], e.id, "webhook-id is the event id: dedupe on it");
			assert.equal((e.data as { status?: string }).status, "SUCCESS");

			// The pending event came first, signed too; a tampered body does not verify.
			assert.ok(deliveries.some((d) => verifyWebhook(endpoint.signing_secret, d.body, d.headers).type === "transaction.pending"));
			assert.throws(() => verifyWebhook(endpoint.signing_secret, event.d.body.replace('"SUCCESS"', '"FAILED"'), event.d.headers), WebhookVerificationError);

			// The event log has it too.
			const logged = await session.GET("/events/{id}/", { params: { path: { id: e.id } } });
			assert.equal(logged.type, "transaction.succeeded");
		} finally {
			await session.DELETE("/merchant-webhooks/{id}/", { params: { path: { id: endpoint.id } } });
			server.close();
		}
	});
});
