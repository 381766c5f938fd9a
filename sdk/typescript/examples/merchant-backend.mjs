// A minimal merchant backend on the Sika TypeScript client: it sells an order through a hosted
// checkout session, receives Sika's webhook, verifies it, and marks the order paid.
//
//   cd sdk/typescript && npm ci && npm run build
//   node examples/merchant-backend.mjs            # after `make run`: reads .sika/dev.json
//   node examples/merchant-backend.mjs --demo     # also plays the customer in TEST, then exits
//
// Routes:
//   POST /orders      {"amount": "5000", "customer_name": "…", "customer_email": "…"}
//                     → {"order": {…}, "checkout_url": "…"}: send the customer there
//   GET  /orders/{id} → the order, "status": "awaiting_payment" | "paid"
//   POST /webhooks    Sika's deliveries (Standard Webhooks signatures)
//
// Settings: SIKA_BASE_URL, SIKA_API_KEY (a TEST or LIVE key of scope PAYIN or BOTH) and
// SIKA_WEBHOOK_SECRET (the endpoint's signing_secret), PORT (default 3000; 0 picks a free one).
// Without them it takes the base URL and the TEST key from `make run`'s .sika/dev.json (found
// from the current directory up, or --dev-json PATH), logs in as the demo merchant, registers
// its own /webhooks URL as a TEST endpoint to get a secret, and removes it when it stops.
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { dirname, join, resolve } from "node:path";
import { randomUUID } from "node:crypto";
import { Sika, SikaError, WebhookVerificationError, verifyWebhook } from "../dist/index.js";

const args = process.argv.slice(2);
const demo = args.includes("--demo");
const devJsonArg = args.includes("--dev-json") ? args[args.indexOf("--dev-json") + 1] : undefined;
const port = Number(process.env.PORT ?? (demo ? 0 : 3000));

function findDevJson() {
	if (devJsonArg) return devJsonArg;
	for (let dir = process.cwd(); ; dir = dirname(dir)) {
		const candidate = join(dir, ".sika", "dev.json");
		if (existsSync(candidate)) return candidate;
		if (dirname(dir) === dir) return undefined;
	}
}

const dev = process.env.SIKA_API_KEY ? undefined : JSON.parse(readFileSync(resolve(findDevJson() ?? ".sika/dev.json"), "utf8"));
const baseUrl = process.env.SIKA_BASE_URL ?? dev.base_url;
const sika = new Sika({ baseUrl, apiKey: process.env.SIKA_API_KEY ?? dev.merchant.api_keys.test_both });

// The shop's orders, in memory.
const orders = new Map(); // id → {id, amount, currency, status, checkout_session, transaction, paid_at}
const seenDeliveries = new Set(); // webhook-id: a delivery may come more than once

async function readBody(req) {
	const chunks = [];
	for await (const chunk of req) chunks.push(chunk);
	return Buffer.concat(chunks).toString("utf8");
}

function send(res, status, body) {
	res.writeHead(status, { "Content-Type": "application/json" }).end(body === undefined ? undefined : JSON.stringify(body));
}

let webhookSecret = process.env.SIKA_WEBHOOK_SECRET;

const server = createServer(async (req, res) => {
	try {
		const url = new URL(req.url, "http://localhost");
		if (req.method === "POST" && url.pathname === "/orders") {
			const input = JSON.parse((await readBody(req)) || "{}");
			const order = { id: randomUUID(), amount: String(input.amount ?? "5000"), currency: "XOF", status: "awaiting_payment" };
			const session = await sika.POST("/checkout-sessions/", {
				body: {
					amount: order.amount,
					currency: order.currency,
					country: "BJ",
					customer_name: input.customer_name ?? "Koffi Mensah",
					customer_email: input.customer_email ?? "koffi@example.com",
					description: `Order ${order.id.slice(0, 8)}`,
					metadata: { order_id: order.id },
				},
			});
			order.checkout_session = session.id;
			orders.set(order.id, order);
			return send(res, 201, { order, checkout_url: session.checkout_url, slug: session.slug });
		}
		if (req.method === "GET" && url.pathname.startsWith("/orders/")) {
			const order = orders.get(url.pathname.slice("/orders/".length));
			return order ? send(res, 200, order) : send(res, 404, { error: "no such order" });
		}
		if (req.method === "POST" && url.pathname === "/webhooks") {
			const body = await readBody(req); // the raw body: verify before parsing
			let event;
			try {
				event = verifyWebhook(webhookSecret, body, req.headers);
			} catch (err) {
				if (err instanceof WebhookVerificationError) return send(res, 401, { error: "bad signature" });
				throw err;
			}
			if (seenDeliveries.has(event.id)) return send(res, 204);
			seenDeliveries.add(event.id);
			if (event.type === "checkout_session.paid") {
				const order = orders.get(event.data.metadata?.order_id);
				if (order && order.status !== "paid") {
					Object.assign(order, { status: "paid", transaction: event.data.transaction, paid_at: event.data.paid_at });
					console.log(`order ${order.id} paid (checkout session ${event.data.id}, transaction ${event.data.transaction})`);
				}
			}
			return send(res, 204);
		}
		send(res, 404, { error: "not found" });
	} catch (err) {
		console.error(err);
		send(res, err instanceof SikaError ? 502 : 500, { error: err instanceof SikaError ? `${err.code}: ${err.message}` : "internal error" });
	}
});

await new Promise((ok) => server.listen(port, "127.0.0.1", ok));
const shopUrl = `http://127.0.0.1:${server.address().port}`;
console.log(`merchant backend on ${shopUrl} (Sika at ${baseUrl})`);

// Without a secret, register this backend's /webhooks as a TEST endpoint (a dashboard call).
let endpoint;
let dashboard;
if (!webhookSecret) {
	if (!dev) throw new Error("set SIKA_WEBHOOK_SECRET, or run after `make run` (dev.json)");
	const login = await new Sika({ baseUrl }).POST("/auth/login/", { body: { email: dev.merchant.email, password: dev.merchant.password } });
	dashboard = new Sika({ baseUrl, apiKey: login.access_token, environment: "TEST" });
	endpoint = await dashboard.POST("/merchant-webhooks/", { body: { url: `${shopUrl}/webhooks`, description: "examples/merchant-backend.mjs" } });
	webhookSecret = endpoint.signing_secret;
	console.log(`registered webhook endpoint ${endpoint.id} for ${shopUrl}/webhooks`);
}

async function stop(code) {
	if (endpoint) await dashboard.DELETE("/merchant-webhooks/{id}/", { params: { path: { id: endpoint.id } } }).catch(() => {});
	server.close();
	process.exit(code);
}
process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));

if (demo) {
	// The shop creates an order; the customer pays it on the hosted page (here its API, which
	// the page calls) with a sandbox number ending 123; the webhook marks the order paid.
	const started = Date.now();
	const created = await (await fetch(`${shopUrl}/orders`, { method: "POST", body: JSON.stringify({ amount: "5000" }) })).json();
	console.log(`order ${created.order.id}: pay at ${created.checkout_url}`);
	const payment = await sika.POST("/checkout/{slug}/pay/", {
		params: { path: { slug: created.slug } },
		body: { network: "MTN_BJ", customer_phone: "97000123" },
	});
	console.log(`customer paying: transaction ${payment.id} ${payment.status}`);
	for (;;) {
		const order = await (await fetch(`${shopUrl}/orders/${created.order.id}`)).json();
		if (order.status === "paid") {
			console.log(`order ${order.id} is paid ${Date.now() - started} ms after it was created`);
			await stop(0);
		}
		if (Date.now() - started > 90_000) {
			console.error(`order ${order.id} not paid within 90 s`);
			await stop(1);
		}
		await new Promise((ok) => setTimeout(ok, 200));
	}
}
