import type { components } from "./generated/schema.js";

/** A business error code of the API (the `code` of the error envelope). */
export type ErrorCode = components["schemas"]["Error"]["code"];

/**
 * The code of a SikaError: a business code of the API, or one the client gives to what has no
 * code of its own: `validation_error` (HTTP 400 whose envelope maps fields to messages, in
 * `details`), `connection_error` (no answer: network error, refused connection) and
 * `unexpected_response` (an answer that is not in the error envelope, e.g. from a proxy). The
 * caller's abort (its `signal`) is no SikaError: it is thrown as fetch throws it (an
 * `AbortError`, or the signal's reason), retries stopped.
 */
export type SikaErrorCode = ErrorCode | "validation_error" | "connection_error" | "unexpected_response";

/** The fields of a validation error: each invalid field, query parameter or header mapped to its messages. */
export type ValidationDetails = Record<string, string[]>;

/**
 * An error answered by the API (or no answer at all). `status` is the HTTP status (0 without an
 * answer), `code` the envelope's code, `message` its message, `details` the field messages of a
 * validation error ({} otherwise), and `requestId` the `X-Request-Id` to quote to support.
 */
export class SikaError extends Error {
	readonly status: number;
	readonly code: SikaErrorCode;
	readonly details: ValidationDetails;
	readonly requestId: string | undefined;
	readonly headers: Headers | undefined;

	constructor(init: {
		status: number;
		code: SikaErrorCode;
		message: string;
		details?: ValidationDetails;
		headers?: Headers;
		cause?: unknown;
	}) {
		super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
		this.name = new.target.name;
		this.status = init.status;
		this.code = init.code;
		this.details = init.details ?? {};
		this.headers = init.headers;
		this.requestId = init.headers?.get("X-Request-Id") ?? undefined;
	}
}

/** 400 with field messages (`code` "validation_error", the fields in `details`). */
export class ValidationError extends SikaError {}
/** 400 `invalid_json`: the body is not JSON. */
export class InvalidRequestError extends SikaError {}
/** 401: `authentication_required`, `invalid_credentials`, `token_expired`. */
export class AuthenticationError extends SikaError {}
/** 403: `api_key_scope_forbidden`, `dashboard_only`, `ip_not_whitelisted`, `merchant_inactive`, `merchant_suspended`, `admin_only`. */
export class PermissionError extends SikaError {}
/** 404 `not_found`. */
export class NotFoundError extends SikaError {}
/** 405 `method_not_allowed`. */
export class MethodNotAllowedError extends SikaError {}
/** 409: a state conflict (`not_pending`, `not_failed`, …) or an Idempotency-Key conflict. */
export class ConflictError extends SikaError {}
/** 413: `request_too_large`, `file_too_large`. */
export class PayloadTooLargeError extends SikaError {}
/** 415 `unsupported_media_type`. */
export class UnsupportedMediaTypeError extends SikaError {}
/** 422: the request is valid but cannot be carried out (`insufficient_balance`, `network_unavailable`, …). */
export class UnprocessableError extends SikaError {}
/** 429 `rate_limited`; `retryAfter` is the answer's Retry-After in seconds. */
export class RateLimitError extends SikaError {
	get retryAfter(): number | undefined {
		return retryAfterSeconds(this.headers);
	}
}
/** 500 `internal_error`. */
export class InternalServerError extends SikaError {}
/** 503 `service_unavailable`: safe to retry with the same Idempotency-Key. */
export class ServiceUnavailableError extends SikaError {}
/** No answer: the request may or may not have been carried out (retry with the same Idempotency-Key). */
export class ConnectionError extends SikaError {}

const byStatus: Record<number, typeof SikaError> = {
	401: AuthenticationError,
	403: PermissionError,
	404: NotFoundError,
	405: MethodNotAllowedError,
	409: ConflictError,
	413: PayloadTooLargeError,
	415: UnsupportedMediaTypeError,
	422: UnprocessableError,
	429: RateLimitError,
	500: InternalServerError,
	503: ServiceUnavailableError,
};

/** The SikaError for an answer that is not 2xx, from its status and its (parsed) body. */
export function errorFromResponse(response: Response, body: unknown): SikaError {
	const { status, headers } = response;
	const error = (body as { success?: unknown; error?: unknown } | null)?.error;
	if (error && typeof error === "object") {
		const { code, message } = error as { code?: unknown; message?: unknown };
		if (typeof code === "string" && typeof message === "string") {
			const Class = status === 400 ? InvalidRequestError : (byStatus[status] ?? SikaError);
			return new Class({ status, code: code as ErrorCode, message, headers });
		}
		if (status === 400) {
			const details = error as ValidationDetails;
			const message = Object.entries(details)
				.map(([field, messages]) => `${field}: ${Array.isArray(messages) ? messages.join(" ") : String(messages)}`)
				.join("; ");
			return new ValidationError({ status, code: "validation_error", message: message || "Invalid request.", details, headers });
		}
	}
	const Class = byStatus[status] ?? SikaError;
	return new Class({ status, code: "unexpected_response", message: `HTTP ${status} without an error envelope`, headers });
}

/** Retry-After in seconds (delta-seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(headers: Headers | undefined): number | undefined {
	const value = headers?.get("Retry-After");
	if (!value) return undefined;
	if (/^\d+$/.test(value.trim())) return Number(value.trim());
	const at = Date.parse(value);
	return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}
