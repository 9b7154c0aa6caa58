/**
 * A board's live events (`GET /v1/boards/{board}/events`, docs/console-events.md) read
 * with `fetch`, so the same code runs in browsers and in Node.js (which has no
 * `EventSource`), and sends the credential as a header rather than in the URL.
 *
 * The stream reconnects by itself: after a dropped connection, a 503 or the server's end
 * of the stream, it waits (the server's `retry:` or the client's back-off) and asks again
 * with `Last-Event-ID`, so the server replays what was missed or answers `resync`.
 */
import { NetworkError, retryAfterOf, type PhotofinishError } from "./errors.js";
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
  /** The member's partition and its rank there, and its team (docs/SPEC.md §17). */
  partition?: string;
  partition_rank?: number;
  team?: string;
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
  /** Only score events of this partition's members (docs/SPEC.md §17). */
  partition?: string;
  /** Resume after this event id (the last one seen, e.g. before a reload). */
  lastEventId?: string;
  /** Ends the stream. */
  signal?: AbortSignal;
  /** Reconnect after a drop (default true); false ends the iteration instead. */
  reconnect?: boolean;
}

/** What the stream needs of the client. */
export interface EventSourceParts {
  url: (query: Record<string, string | string[] | undefined>) => string;
  headers: () => Record<string, string>;
  fetch: typeof fetch;
  /** The wait before reconnection `attempt` (1-based), or after a `Retry-After`. */
  backoff: (attempt: number, retryAfter?: number) => number;
  fail: (status: number, body: string, retryAfter: number | undefined) => PhotofinishError;
}

/** One event as the wire gave it. */
export interface Frame {
  event: string;
  data: string;
  id?: string;
  retry?: number;
}

/**
 * Splits the stream's text into frames (the SSE format: fields, then a blank line). A
 * frame that only sets an `id` is given too (it moves the resume point). Ending the
 * iteration cancels the body, so the connection closes.
 */
export async function* readFrames(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<Frame> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  let cur: Frame = { event: "message", data: "" };
  let hasData = false;
  const stop = () => void reader.cancel().catch(() => {});
  signal?.addEventListener("abort", stop, { once: true });
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      for (;;) {
        const m = /\r\n|\r|\n/.exec(buf);
        // A CR at the end may be the first half of a CRLF split across chunks: wait.
        if (!m || (m[0] === "\r" && m.index === buf.length - 1)) break;
        const line = buf.slice(0, m.index);
        buf = buf.slice(m.index + m[0].length);
        if (line === "") {
          if (hasData || cur.id !== undefined) yield cur;
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
    await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

function toEvent(f: Frame, lastId: string | undefined): BoardEvent | undefined {
  if (!["score", "remove", "reset", "resync"].includes(f.event)) return undefined;
  const data = f.data ? (parse(f.data) as Record<string, unknown>) : {};
  return { ...data, type: f.event, id: f.id ?? lastId ?? "" } as BoardEvent;
}

/** Waits `ms`, or less if `signal` aborts. */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * The members filter as the server reads it: one `members=` per name (a name may hold a
 * comma), and a lone name twice, since one value alone is split on commas.
 */
function membersQuery(members: string[] | undefined): string[] | undefined {
  if (!members || members.length === 0) return undefined;
  return members.length === 1 ? [members[0] as string, members[0] as string] : members;
}

/** The events of one board, reconnecting as `EventsOptions` says. */
export async function* openEvents(parts: EventSourceParts, options: EventsOptions): AsyncGenerator<BoardEvent> {
  // Its own controller: the caller's signal, or the caller leaving the loop, ends the
  // request in flight as well as the body being read.
  const controller = new AbortController();
  const signal = controller.signal;
  const forward = () => controller.abort();
  if (options.signal?.aborted) return;
  options.signal?.addEventListener("abort", forward, { once: true });
  let last = options.lastEventId;
  let failures = 0;
  let serverRetry: number | undefined;
  const reconnect = options.reconnect ?? true;
  try {
    while (!signal.aborted) {
      const headers: Record<string, string> = { Accept: "text/event-stream", ...parts.headers() };
      if (last !== undefined) headers["Last-Event-ID"] = last;
      const url = parts.url({ members: membersQuery(options.members), partition: options.partition });
      let res: Response | undefined;
      try {
        res = await parts.fetch(url, { headers, signal });
      } catch (e) {
        if (signal.aborted) return;
        if (!reconnect) throw new NetworkError(`GET ${url}: ${(e as Error)?.message ?? e}`, e);
      }
      let retryAfter: number | undefined;
      if (res && !res.ok) {
        const text = await res.text().catch(() => "");
        retryAfter = retryAfterOf(res.headers);
        // A refusal other than "busy" will be refused again: it ends the stream.
        if (res.status !== 503 || !reconnect) throw parts.fail(res.status, text, retryAfter);
      } else if (res?.body) {
        try {
          for await (const f of readFrames(res.body, signal)) {
            if (f.retry !== undefined) serverRetry = f.retry;
            const e = toEvent(f, last);
            if (f.id !== undefined) last = f.id;
            if (e) {
              failures = 0;
              yield e;
            }
          }
        } catch (e) {
          if (signal.aborted) return;
          if (!reconnect) throw new NetworkError(`the event stream of ${url} broke: ${(e as Error)?.message ?? e}`, e);
        }
        if (!reconnect) return;
      }
      failures++;
      // The server's `retry:` unless it said `Retry-After`; else the client's back-off.
      const wait =
        retryAfter === undefined && serverRetry !== undefined
          ? serverRetry
          : parts.backoff(Math.min(failures, 10), retryAfter);
      await pause(wait, signal);
    }
  } finally {
    options.signal?.removeEventListener("abort", forward);
    controller.abort();
  }
}
