/**
 * Errors a call can end with. The server answers every refusal with a stable `code`
 * (`ErrorCode`, generated from its OpenAPI document) and a human message: those arrive as
 * `PhotofinishError`. A call that never got an answer (the network failed, or it ran out
 * of time, after its retries) ends with `NetworkError`.
 */
import type { ErrorBody, GrantView } from "./schema.js";

/** Every code the server may answer with (docs/SPEC.md §3). */
export type ErrorCode = ErrorBody["error"]["code"];

/** The code of an answer that was not the server's error shape (e.g. a proxy's page). */
export const UNEXPECTED_ANSWER = "unexpected_answer";

/** The seconds of an answer's `Retry-After`, when it gives a whole number of them. */
export function retryAfterOf(headers: Headers): number | undefined {
  const ra = headers.get("Retry-After");
  return ra !== null && /^[0-9]+$/.test(ra) ? Number(ra) : undefined;
}

/** The server refused the call: its HTTP status, code and message. */
export class PhotofinishError extends Error {
  override readonly name = "PhotofinishError";
  constructor(
    /** The HTTP status (400, 401, 403, 404, 409, 413, 422, 429, 503, 507, …). */
    readonly status: number,
    /**
     * The server's stable code, e.g. `member_not_found` or `rate_limited`; or
     * `unexpected_answer` when the answer was not the server's (a proxy's error page).
     */
    readonly code: ErrorCode | typeof UNEXPECTED_ANSWER,
    message: string,
    /** Seconds the server asked to wait before trying again (429 and 503), if it said. */
    readonly retryAfter?: number,
    /**
     * The `Idempotency-Key` the call was sent with, if it had one: after a 503 or an
     * `idempotency_key_in_flight` the outcome may be unknown, and sending the call again
     * with this key (`{idempotencyKey}`) counts it once whatever happened.
     */
    public idempotencyKey?: string,
  ) {
    super(message);
  }

  /** On `already_claimed` (409): the grant, as it was claimed (docs/SPEC.md §16). */
  grant?: GrantView;
}

/** The call got no answer: the connection failed or timed out, every try. */
export class NetworkError extends Error {
  override readonly name = "NetworkError";
  constructor(
    message: string,
    /** What the last try failed with. */
    override readonly cause?: unknown,
    /**
     * The `Idempotency-Key` the call was sent with, if it had one: the write may have been
     * applied, and sending it again with this key counts it once whatever happened.
     */
    readonly idempotencyKey?: string,
  ) {
    super(message);
  }
}
