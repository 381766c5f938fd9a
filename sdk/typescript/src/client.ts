import createClient, {
	type Client,
	type ClientPathsWithMethod,
	type FetchResponse,
	type MaybeOptionalInit,
	type Middleware,
} from "openapi-fetch";
import type { components, paths } from "./generated/schema.js";
import { ConnectionError, SikaError, errorFromResponse, retryAfterSeconds } from "./errors.js";

/** The schemas of the API by name: `Schemas["Transaction"]`, `Schemas["Payment"]`, … */
export type Schemas = components["schemas"];

type Method = "get" | "put" | "post" | "delete" | "patch";
type Media = `${string}/${string}`;
type RequiredKeysOf<T> = { [K in keyof T]: {} extends Pick<T, K> ? never : K }[keyof T];
type InitParam<I> = RequiredKeysOf<I> extends never ? [(I & { [key: string]: unknown })?] : [I & { [key: string]: unknown }];
type Envelope<E> = E extends { success: true; data: infer D } ? D : E;

/** The paths that take `method`. */
export type PathsFor<M extends Method> = ClientPathsWithMethod<Client<paths>, M>;

/** What a call answers once unwrapped from its envelope: the resource, page or list (or, for the one route without an envelope, the bare body). */
export type ResponseData<P extends keyof paths, M extends Method, I = {}> = paths[P] extends { [K in M]: infer Op }
	? Op extends Record<string | number, any>
		? Envelope<NonNullable<FetchResponse<Op, I, Media>["data"]>>
		: never
	: never;

/** A method of Sika: like openapi-fetch's, but it answers the unwrapped data and throws a SikaError for any answer that is not 2xx. */
export type SikaMethod<M extends Method> = <P extends PathsFor<M>, I extends MaybeOptionalInit<paths[P], M>>(
	url: P,
	...init: InitParam<I>
) => Promise<ResponseData<P, M, I>>;

/** The GET paths that answer a list (`{next, previous, results}`), page-numbered or cursor. */
export type ListPath = {
	[P in PathsFor<"get">]: ResponseData<P, "get"> extends { next: string | null; results: unknown[] } ? P : never;
}[PathsFor<"get">];
/** A page of a list path. */
export type PageOf<P extends ListPath> = ResponseData<P, "get">;
/** An item of a list path. */
export type ItemOf<P extends ListPath> = PageOf<P> extends { results: (infer Item)[] } ? Item : never;

type IdempotentPath = {
	[P in keyof paths]: paths[P] extends { post: { parameters: { header?: infer H } } }
		? [NonNullable<H>] extends [never]
			? never
			: "Idempotency-Key" extends keyof NonNullable<H>
				? P
				: never
		: never;
}[keyof paths];

/**
 * The money-moving operations (all POST): each call gets an Idempotency-Key unless it has one,
 * and keeps it on its retries. The type checks that these are exactly the operations whose
 * OpenAPI description takes the header: a new one in the document fails the build until it is
 * listed here.
 */
export const MONEY_MOVING_PATHS = [
	"/payments/softpay/",
	"/payments/softpay/initialize/",
	"/payments/{id}/confirm-otp/",
	"/payments/{id}/retry/",
	"/payouts/initialize/",
	"/payout-batches/",
	"/refunds/",
	"/settlements/",
	"/wallet-transfers/",
] as const satisfies readonly IdempotentPath[];
const everyIdempotentPathListed: [Exclude<IdempotentPath, (typeof MONEY_MOVING_PATHS)[number]>] extends [never] ? true : never = true;
void everyIdempotentPathListed;
const moneyMoving = new Set<string>(MONEY_MOVING_PATHS);

export interface SikaOptions {
	/** The API's base URL, e.g. `http://127.0.0.1:8080/api/v1` for `make run` (its `base_url` in .sika/dev.json). */
	baseUrl: string;
	/** An API key (`sk_test_…`, `sk_live_…`), or a dashboard session token from `POST /auth/login/`: sent as `Authorization: Bearer …`. */
	apiKey?: string;
	/** Dashboard sessions only: the environment the calls act in (header `X-Environment`; the API's default is LIVE). */
	environment?: "TEST" | "LIVE";
	/** Dashboard sessions only: the merchant the calls act for (header `X-Merchant-Id`). */
	merchantId?: string;
	/** Headers added to every call. */
	headers?: Record<string, string>;
	/** Retries of one call after a network error, a 429, a 503 or a 409 `idempotency_key_in_use` (default 2; 0 disables them). */
	maxRetries?: number;
	/** The longest wait before a retry, in ms (default 30 000): a Retry-After beyond it is not waited for, the error is thrown. */
	maxRetryDelayMs?: number;
	/** The first backoff without Retry-After, in ms (default 500; doubled per retry, with jitter). */
	initialRetryDelayMs?: number;
	/** The fetch to use (default globalThis.fetch). */
	fetch?: (request: Request) => Promise<Response>;
	/** Makes the Idempotency-Key of a money-moving call that has none (default crypto.randomUUID). */
	idempotencyKey?: () => string;
}

/**
 * A client of the Sika merchant API.
 *
 * `GET`, `POST`, `PUT`, `PATCH` and `DELETE` take the paths and parameters of the OpenAPI
 * document, typed, and answer the `data` of the envelope; an answer that is not 2xx throws a
 * SikaError subclass carrying its `code`. `client` is the underlying openapi-fetch client,
 * answering `{data, error, response}` as openapi-fetch does (for headers such as
 * `Idempotent-Replayed`). Both send the key, give money-moving calls an Idempotency-Key, and
 * retry network errors, 429, 503 and 409 `idempotency_key_in_use` with the same key.
 */
export class Sika {
	readonly client: Client<paths>;
	readonly GET: SikaMethod<"get">;
	readonly POST: SikaMethod<"post">;
	readonly PUT: SikaMethod<"put">;
	readonly PATCH: SikaMethod<"patch">;
	readonly DELETE: SikaMethod<"delete">;

	constructor(options: SikaOptions) {
		const headers: Record<string, string> = { ...options.headers };
		if (options.apiKey) headers["Authorization"] = `Bearer ${options.apiKey}`;
		if (options.environment) headers["X-Environment"] = options.environment;
		if (options.merchantId) headers["X-Merchant-Id"] = options.merchantId;
		this.client = createClient<paths>({
			baseUrl: options.baseUrl,
			headers,
			fetch: retryingFetch(options),
		});
		this.client.use(idempotency(options.idempotencyKey ?? randomKey));
		const unwrap = (method: Method) =>
			(async (url: string, ...init: unknown[]) => {
				const call = (this.client as any)[method.toUpperCase()] as (url: string, ...init: unknown[]) => Promise<FetchResponse<any, any, any>>;
				const { data, error, response } = await call(url, ...init);
				if (!response.ok) throw errorFromResponse(response, error);
				return envelopeData(data);
			}) as any;
		this.GET = unwrap("get");
		this.POST = unwrap("post");
		this.PUT = unwrap("put");
		this.PATCH = unwrap("patch");
		this.DELETE = unwrap("delete");
	}

	/**
	 * Every page of a list, first to last, following each page's `next` (cursor lists such as
	 * `/transactions/` and page-numbered lists alike). The query of `init` (filters, `page_size`)
	 * applies to the first page; the next ones carry it in their `next`.
	 */
	async *pages<P extends ListPath>(path: P, ...init: InitParam<MaybeOptionalInit<paths[P], "get">>): AsyncGenerator<PageOf<P>, void, undefined> {
		const first = (init[0] ?? {}) as { params?: { query?: Record<string, unknown> } };
		let query: Record<string, unknown> | undefined = first.params?.query;
		for (;;) {
			const page = (await (this.GET as any)(path, { ...first, params: { ...first.params, query } })) as { next: string | null };
			yield page as PageOf<P>;
			if (!page.next) return;
			query = Object.fromEntries(new URL(page.next).searchParams);
		}
	}

	/** Every item of a list, page after page (see `pages`). */
	async *list<P extends ListPath>(path: P, ...init: InitParam<MaybeOptionalInit<paths[P], "get">>): AsyncGenerator<ItemOf<P>, void, undefined> {
		for await (const page of this.pages(path, ...init)) {
			yield* (page as { results: ItemOf<P>[] }).results;
		}
	}
}

function envelopeData(body: unknown): unknown {
	if (body && typeof body === "object" && (body as { success?: unknown }).success === true && "data" in body) {
		return (body as { data: unknown }).data;
	}
	return body;
}

function idempotency(makeKey: () => string): Middleware {
	return {
		onRequest({ request, schemaPath }) {
			if (request.method === "POST" && moneyMoving.has(schemaPath) && !request.headers.has("Idempotency-Key")) {
				request.headers.set("Idempotency-Key", makeKey());
			}
			return request;
		},
	};
}

function randomKey(): string {
	const c = (globalThis as { crypto?: { randomUUID?: () => string; getRandomValues?: (a: Uint8Array) => Uint8Array } }).crypto;
	if (c?.randomUUID) return c.randomUUID();
	const b = new Uint8Array(16);
	if (c?.getRandomValues) c.getRandomValues(b);
	else for (let i = 0; i < b.length; i++) b[i] = Math.floor(Math.random() * 256);
	b[6] = (b[6]! & 0x0f) | 0x40;
	b[8] = (b[8]! & 0x3f) | 0x80;
	const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
	return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const safeMethods = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

/**
 * The fetch behind the client: it retries, at most maxRetries times, a call that got no answer
 * or a 503 when repeating it is safe (an idempotent method, or a request with an
 * Idempotency-Key, which the retry keeps), any call answered 429 (not carried out), and a call
 * with an Idempotency-Key answered 409 `idempotency_key_in_use` (an earlier try with the key,
 * one whose answer was lost to a network error or a timeout, is still being carried out: the
 * retry gets its stored answer once it is done). It waits Retry-After when the answer has one,
 * else an exponential backoff with jitter; a wait beyond maxRetryDelayMs is not made and the
 * answer is returned as it is. A network error that is not retried becomes a ConnectionError;
 * the caller's abort is thrown as it is (an AbortError, or the signal's reason).
 */
function retryingFetch(options: SikaOptions): (request: Request) => Promise<Response> {
	const base = options.fetch ?? ((request: Request) => globalThis.fetch(request));
	const maxRetries = Math.max(0, options.maxRetries ?? 2);
	const maxDelay = options.maxRetryDelayMs ?? 30_000;
	const initialDelay = options.initialRetryDelayMs ?? 500;
	const backoff = (attempt: number) => Math.min(maxDelay, initialDelay * 2 ** attempt) * (0.5 + Math.random() / 2);
	return async (request: Request) => {
		const keyed = request.headers.has("Idempotency-Key");
		const safe = safeMethods.has(request.method) || keyed;
		for (let attempt = 0; ; attempt++) {
			const last = attempt >= maxRetries;
			let response: Response;
			try {
				response = await base(last ? request : request.clone());
			} catch (cause) {
				if (request.signal?.aborted || cause instanceof SikaError) throw cause; // the caller's abort stays an abort
				if (last || !safe) {
					throw new ConnectionError({ status: 0, code: "connection_error", message: `No answer from ${new URL(request.url).host}: ${String((cause as Error)?.message ?? cause)}`, cause });
				}
				await sleep(backoff(attempt), request.signal);
				continue;
			}
			if (last || !(response.status === 429 || (response.status === 503 && safe) || (response.status === 409 && keyed && (await keyInUse(response))))) return response;
			const after = retryAfterSeconds(response.headers);
			const wait = after === undefined ? backoff(attempt) : after * 1000;
			if (wait > maxDelay) return response;
			await response.body?.cancel().catch(() => {});
			await sleep(wait, request.signal);
		}
	};
}

/** Whether a 409 is `idempotency_key_in_use` (read from a clone: the response stays unread). */
async function keyInUse(response: Response): Promise<boolean> {
	try {
		const body = (await response.clone().json()) as { error?: { code?: unknown } } | null;
		return body?.error?.code === "idempotency_key_in_use";
	} catch {
		return false;
	}
}

function sleep(ms: number, signal?: AbortSignal | null): Promise<void> {
	return new Promise((resolve, reject) => {
		if (signal?.aborted) return reject(signal.reason);
		const timer = setTimeout(() => {
			signal?.removeEventListener("abort", onAbort);
			resolve();
		}, ms);
		const onAbort = () => {
			clearTimeout(timer);
			reject(signal?.reason);
		};
		signal?.addEventListener("abort", onAbort, { once: true });
	});
}
