// What the tests against the service share. The service is the one `sika dev` runs: its
// dev.json (base URL, keys, logins) is named by SIKA_SDK_DEV_JSON, which sdk_test.go sets after
// starting it, with the fixtures it wrote to the database (SIKA_SDK_*). Without it these tests
// are skipped: run them with `go test ./sdk/typescript/` (inside `sika stack`, as `make test`
// does), or point SIKA_SDK_DEV_JSON at the dev.json of a `make run`.
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { Sika, type SikaOptions } from "../src/index.js";

export interface DevInfo {
	base_url: string;
	sandbox_url: string;
	admin: { email: string; password: string };
	merchant: {
		id: string;
		email: string;
		password: string;
		api_keys: { test_both: string; test_payin: string; test_payout: string; live_both: string };
	};
}

const devPath = process.env.SIKA_SDK_DEV_JSON;
export const dev: DevInfo | undefined = devPath ? (JSON.parse(readFileSync(devPath, "utf8")) as DevInfo) : undefined;

/** A test against the service; skipped without SIKA_SDK_DEV_JSON. */
export const serviceTest: typeof test = (dev ? test : test.skip) as typeof test;

export function fixture(name: "FROZEN_KEY" | "LIMITED_KEY" | "EXPIRED_TOKEN"): string {
	const v = process.env[`SIKA_SDK_${name}`];
	if (!v) throw new Error(`SIKA_SDK_${name} is not set (sdk_test.go writes it)`);
	return v;
}

/** A client of the demo merchant's TEST key of every scope (or another key). */
export function sika(options: Partial<SikaOptions> = {}): Sika {
	return new Sika({ baseUrl: dev!.base_url, apiKey: dev!.merchant.api_keys.test_both, initialRetryDelayMs: 100, ...options });
}

/** A dashboard client of a member, in TEST, after logging in. */
export async function dashboard(email: string, password: string, options: Partial<SikaOptions> = {}): Promise<Sika> {
	const session = await sika({ apiKey: undefined }).POST("/auth/login/", { body: { email, password } });
	return sika({ apiKey: session.access_token, environment: "TEST", ...options });
}

/**
 * Polls fn until it answers something other than undefined, or fails after timeoutMs: two minutes
 * by default, since a payment or a delivery that takes a second alone can wait a minute in the
 * worker's queue when make test runs everything at once on a small machine.
 */
export async function eventually<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 120_000, everyMs = 250): Promise<T> {
	const deadline = Date.now() + timeoutMs;
	let last: unknown;
	for (;;) {
		try {
			const v = await fn();
			if (v !== undefined) return v;
		} catch (err) {
			last = err;
		}
		if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (last error: ${String(last)})` : ""}`);
		await new Promise((r) => setTimeout(r, everyMs));
	}
}

/** The transaction once it left PENDING. */
export async function final(client: Sika, id: string, timeoutMs = 120_000) {
	return eventually(`transaction ${id} final`, async () => {
		const t = await client.GET("/transactions/{id}/", { params: { path: { id } } });
		return t.status === "PENDING" ? undefined : t;
	}, timeoutMs);
}

/**
 * A 10-digit Benin MTN number of the sandbox ending in suffix (its last three digits decide the
 * outcome): 100,000 per suffix, so that the tests that find their payment by searching its number
 * do not find another test's (with 8 digits, 1,000 per suffix, the Go client's tests did).
 */
export function phone(suffix: string): string {
	return `01${String(Math.floor(Math.random() * 100000)).padStart(5, "0")}${suffix}`;
}

export const softpayBody = (suffix: string, extra: Record<string, unknown> = {}) => ({
	amount: "1000",
	currency: "XOF",
	country: "BJ",
	network: "MTN_BJ",
	customer_phone: phone(suffix),
	customer_name: "Koffi Mensah",
	...extra,
});
