/**
 * A board's live events (`GET /v1/boards/{board}/events`, docs/console-events.md) read
 * with `fetch`, so the same code runs in browsers and in Node.js (which has no
 * `EventSource`), and sends the credential as a header rather than in the URL.
 *
 * The stream reconnects by itself: after a dropped connection, a 503 or the server's end
 * of the stream, it waits (the server's `retry:` or the client's back-off) and asks again
 * with `Last-Event-ID`, so the server replays what was missed or answers `resync`.
 */
import { NetworkError, type PhotofinishError } from "./errors.js";
import { parse } from "./json.js";
import type { Score } from "./schema.js";

/** A member's new score and rank in the current period. */
export interface ScoreEvent {
  type: "score";
  id: string;
  member: string;
  score: Score;
  /** Every column's value by name, on a board of several columns. */
  scores?: Record<string, Score>;
  rank: number;
  reached_at: string;
  period: string;
}

/** A member left the standings (deleted, or hidden). */
export interface RemoveEvent {
  type: "remove";
  id: string;
  member: string;
  period: string;
}

/** A new period began. */
export interface ResetEvent {
  type: "reset";
  id: string;
  period: string;
  previous: string;
}

/** Events were missed (the id asked for is gone, or the server restarted): reload. */
export interface ResyncEvent {
  type: "resync";
  id: string;
}

export type BoardEvent = ScoreEvent | RemoveEvent | ResetEvent | ResyncEvent;

/** What to watch and from where. */
export interface EventsOptions {
  /** Only these members' events. */
  members?: string[];
  /** Resume after this event id (the last one seen, e.g. before a reload). */
  lastEventId?: string;
  /** Ends the stream. */
  signal?: AbortSignal;
  /** Reconnect after a drop (default true); false ends the iteration instead. */
  reconnect?: boolean;
}

/** What the stream needs of the client. */
export interface EventSourceParts {
  url: (query: Record<string, string | undefined>) => string;
  headers: () => Record<string, string>;
  fetch: typeof fetch;
  retryDelayMs: number;
  maxRetryDelayMs: number;
  fail: (status: number, body: string, retryAfter: number | undefined) => PhotofinishError;
}

/** One event as the wire gave it. */
interface Frame {
  event: string;
  data: string;
  id?: string;
  retry?: number;
}

/** Splits the stream's text into frames (the SSE format: fields, then a blank line). */
async function* frames(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<Frame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let cur: Frame = { event: "message", data: "" };
  let hasData = false;
  const stop = () => void reader.cancel().catch(() => {});
  signal?.addEventListener("abort", stop);
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + (buf.startsWith("\r\n", nl) ? 2 : 1));
        if (line === "") {
          if (hasData) yield cur;
          cur = { event: "message", data: "" };
          hasData = false;
          continue;
        }
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") cur.event = value;
        else if (field === "data") {
          cur.data = hasData ? `${cur.data}\n${value}` : value;
          hasData = true;
        } else if (field === "id") cur.id = value;
        else if (field === "retry" && /^[0-9]+$/.test(value)) cur.retry = Number(value);
      }
    }
  } finally {
    signal?.removeEventListener("abort", stop);
    reader.releaseLock();
  }
}

function toEvent(f: Frame): BoardEvent | undefined {
  if (!["score", "remove", "reset", "resync"].includes(f.event)) return undefined;
  const data = f.data ? (parse(f.data) as Record<string, unknown>) : {};
  return { ...data, type: f.event, id: f.id ?? "" } as BoardEvent;
}

/** The events of one board, reconnecting as `EventsOptions` says. */
export async function* openEvents(parts: EventSourceParts, options: EventsOptions): AsyncGenerator<BoardEvent> {
  let last = options.lastEventId;
  let failures = 0;
  let serverRetry: number | undefined;
  const reconnect = options.reconnect ?? true;
  while (!options.signal?.aborted) {
    const headers: Record<string, string> = { Accept: "text/event-stream", ...parts.headers() };
    if (last !== undefined) headers["Last-Event-ID"] = last;
    const url = parts.url({ members: options.members?.join(",") });
    let res: Response | undefined;
    try {
      res = await parts.fetch(url, { headers, signal: options.signal });
    } catch (e) {
      if (options.signal?.aborted) return;
      if (!reconnect) throw new NetworkError(`GET ${url}: ${(e as Error)?.message ?? e}`, e);
    }
    let retryAfter: number | undefined;
    if (res && !res.ok) {
      const text = await res.text().catch(() => "");
      const ra = res.headers.get("Retry-After");
      retryAfter = ra !== null && /^[0-9]+$/.test(ra) ? Number(ra) : undefined;
      // A refusal other than "busy" will be refused again: it ends the stream.
      if (res.status !== 503 || !reconnect) throw parts.fail(res.status, text, retryAfter);
    } else if (res?.body) {
      try {
        for await (const f of frames(res.body, options.signal)) {
          if (f.retry !== undefined) serverRetry = f.retry;
          if (f.id !== undefined) last = f.id;
          const e = toEvent(f);
          if (e) {
            failures = 0;
            yield e;
          }
        }
      } catch (e) {
        if (options.signal?.aborted) return;
        if (!reconnect) throw new NetworkError(`the event stream of ${url} broke: ${(e as Error)?.message ?? e}`, e);
      }
      if (!reconnect) return;
    }
    failures++;
    const backoff = Math.min(parts.retryDelayMs * 2 ** Math.min(failures - 1, 10), parts.maxRetryDelayMs);
    const wait = retryAfter !== undefined ? Math.min(retryAfter * 1000, parts.maxRetryDelayMs) : (serverRetry ?? backoff);
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, wait);
      options.signal?.addEventListener("abort", () => {
        clearTimeout(t);
        resolve();
      });
    });
  }
}
