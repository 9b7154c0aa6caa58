/**
 * The Photofinish client for games and browsers: every call of the HTTP API, typed with
 * the server's own shapes, scores exact as `bigint`, safe retries with idempotency keys,
 * and the live event stream. No runtime dependencies: `fetch` is all it needs.
 *
 * ```ts
 * const pf = new Photofinish({ baseUrl: "https://scores.example.com", token: playerToken });
 * const { rank } = await pf.submit("weekly", "ann", { score: 1200 });
 * for await (const e of pf.events("weekly")) console.log(e);
 * ```
 */
export { Photofinish, newIdempotencyKey } from "./client.js";
export type { ClientOptions, Ranking, PeriodOption, ReadOptions, PageOptions, Submit, BatchEntry, ChangeOptions } from "./client.js";
export { PhotofinishError, NetworkError, UNEXPECTED_ANSWER } from "./errors.js";
export type { ErrorCode } from "./errors.js";
export type { BoardEvent, ScoreEvent, RemoveEvent, ResetEvent, ResyncEvent, EventsOptions } from "./events.js";
export { parse as parseJson, stringify as stringifyJson } from "./json.js";
export type * from "./schema.js";
