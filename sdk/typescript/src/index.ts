// The Sika merchant API client: the types generated from the OpenAPI document
// (./generated/schema.ts, by openapi-typescript), the openapi-fetch client, and the few helpers
// generation cannot give (credentials, idempotency keys and retries, list iterators, typed
// errors, webhook verification).
export { Sika, MONEY_MOVING_PATHS } from "./client.js";
export type { SikaOptions, SikaMethod, Schemas, ResponseData, PathsFor, ListPath, PageOf, ItemOf } from "./client.js";
export * from "./errors.js";
export { verifyWebhook, WebhookVerificationError } from "./webhooks.js";
export type { WebhookEvent, HeadersLike } from "./webhooks.js";
export type { paths, components, operations } from "./generated/schema.js";
