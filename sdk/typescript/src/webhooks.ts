import { Webhook, WebhookVerificationError } from "standardwebhooks";
import type { components } from "./generated/schema.js";

export { WebhookVerificationError };

/** An event as Sika delivers it to a webhook endpoint (and lists it at `GET /events/`). */
export type WebhookEvent = components["schemas"]["Event"];

/** Request headers as fetch (`Headers`) or Node's `http` (`IncomingHttpHeaders`) give them. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>;

/**
 * Verifies a webhook delivery the Standard Webhooks way, with the `standardwebhooks` library:
 * the `webhook-signature` (any of its signatures: after a secret rotation deliveries carry two)
 * must be the HMAC-SHA256 of `webhook-id`, `webhook-timestamp` and the raw body under the
 * endpoint's `signing_secret` (`whsec_…`), and the timestamp within five minutes of now. Pass
 * the body exactly as received, before any JSON parsing. Answers the event; throws a
 * WebhookVerificationError otherwise. Dedupe deliveries on `webhook-id` (= the event's `id`).
 */
export function verifyWebhook(secret: string, payload: string | Uint8Array, headers: HeadersLike): WebhookEvent {
	const body = typeof payload === "string" ? payload : new TextDecoder().decode(payload);
	return new Webhook(secret).verify(body, plainHeaders(headers)) as WebhookEvent;
}

function plainHeaders(headers: HeadersLike): Record<string, string> {
	const out: Record<string, string> = {};
	if (typeof (headers as Headers).forEach === "function" && typeof (headers as Headers).get === "function") {
		(headers as Headers).forEach((value, name) => {
			out[name.toLowerCase()] = value;
		});
		return out;
	}
	for (const [name, value] of Object.entries(headers as Record<string, string | string[] | undefined>)) {
		if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.join(" ") : value;
	}
	return out;
}
