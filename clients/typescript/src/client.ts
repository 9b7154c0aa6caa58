/**
 * The Photofinish client: one method per call of the HTTP API (docs/SPEC.md §3), typed
 * with the server's own shapes (`schema.ts`, generated from its OpenAPI document).
 *
 * Rules every call follows:
 * - Scores are `bigint` in answers and may be given as `bigint`, a safe integer or a
 *   decimal string; none is ever rounded (`json.ts`).
 * - A refusal is a `PhotofinishError` with the server's status and stable code.
 * - Calls that are safe to repeat are retried on a network error, a 503 or a 429 (after
 *   the server's `Retry-After` when it gives one). Reads are safe; so are writes, because
 *   each submit, batch, board create and member delete carries an `Idempotency-Key`
 *   (made here unless the caller gives one) that the server answers a retry with the
 *   first answer for, without applying it twice. An import is never retried.
 */
import { PhotofinishError, NetworkError, UNEXPECTED_ANSWER, retryAfterOf, type ErrorCode } from "./errors.js";
import { openEvents, type BoardEvent, type EventsOptions } from "./events.js";
import { checkScore, parse, stringify } from "./json.js";
import type {
  AuditView,
  BatchResult,
  BoardConfigBody,
  BoardList,
  BoardPatchBody,
  BoardView,
  CohortListView,
  CohortView,
  EntriesPage,
  GrantView,
  Health,
  HiddenView,
  ImportAnswer,
  ImportLine,
  JoinView,
  ErasedView,
  MemberBoardsView,
  MemberExportView,
  MemberRewardsView,
  MembersQueryView,
  MemberView,
  MovesView,
  PartitionListView,
  PeriodList,
  PeriodRewardsView,
  ScoreInput,
  ScoreRankView,
  TeamDetailView,
  TeamListView,
  ThresholdsView,
  TierView,
  TransferLine,
  WriteBody,
  WriteResult,
} from "./schema.js";

/** How to reach the server, and how hard to try. */
export interface ClientOptions {
  /** The server's URL, e.g. `https://scores.example.com` (a path prefix is kept). */
  baseUrl: string;
  /** An API key (`pf_…`) or a player's token; none on an open server. */
  token?: string;
  /** Tries after the first, for calls safe to repeat. Default 3. */
  retries?: number;
  /** The wait before the first retry, doubled for each next one (plus jitter). Default 200 ms. */
  retryDelayMs?: number;
  /** The longest wait between tries, whatever `Retry-After` says. Default 10 s. */
  maxRetryDelayMs?: number;
  /** Each try's time limit. Default 10 s. */
  timeoutMs?: number;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
}

/** The rank style of an answer (docs/SPEC.md §2). Default `competition`. */
export type Ranking = "ordinal" | "competition" | "dense";

/** Which period a read is of: `current` (default), `previous` or a period id. */
export interface PeriodOption {
  period?: string;
}

/** A read's period and rank style, and the partition it is of (docs/SPEC.md §17). */
export interface ReadOptions extends PeriodOption {
  ranking?: Ranking;
  partition?: string;
}

/** A page: `offset` from the top (default 0), `limit` rows (default 10, at most 1000). */
export interface PageOptions extends ReadOptions {
  offset?: number;
  limit?: number;
}

/** A write, as `submit` takes it: `score` or `scores` (by column name), exactly one. */
export type Submit = Omit<WriteBody, "member">;

/** A write in a batch: its member and the write. */
export type BatchEntry = WriteBody;

/** Options of a change: the `Idempotency-Key` to send (made here when absent). */
export interface ChangeOptions {
  idempotencyKey?: string;
}

type Query = Record<string, string | number | boolean | undefined | string[]>;

/** A call's answer, read whole. */
interface Answer {
  status: number;
  ok: boolean;
  headers: Headers;
  text: string;
}

interface Call {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  path: string[];
  query?: Query;
  body?: unknown;
  /** A body sent as it is (an import's NDJSON). */
  rawBody?: string;
  contentType?: string;
  headers?: Record<string, string>;
  /** Whether the call may be sent again after a failure that may have applied it. */
  retry: boolean;
}

/**
 * A new `Idempotency-Key`: a random UUID (`crypto.randomUUID`, or one made from
 * `crypto.getRandomValues` where only that exists; on Node.js 18, whose `crypto` global is
 * off by default, from `Math.random` — a key must be unique, not secret).
 */
export function newIdempotencyKey(): string {
  const c = (globalThis as { crypto?: { randomUUID?: () => string; getRandomValues?: (a: Uint8Array) => Uint8Array } })
    .crypto;
  if (c?.randomUUID) return c.randomUUID();
  const bytes = new Uint8Array(16);
  if (c?.getRandomValues) c.getRandomValues(bytes);
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A score as the server reads it: a JSON integer, or a decimal string past 2^53. */
function scoreParam(score: ScoreInput): string {
  checkScore(score);
  return String(score);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A Photofinish server, as one credential sees it. */
export class Photofinish {
  private readonly base: string;
  private readonly opts: Required<Omit<ClientOptions, "token" | "fetch">> & Pick<ClientOptions, "token">;
  private readonly fetcher: typeof fetch;

  constructor(options: ClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, "");
    this.opts = {
      baseUrl: this.base,
      token: options.token,
      retries: options.retries ?? 3,
      retryDelayMs: options.retryDelayMs ?? 200,
      maxRetryDelayMs: options.maxRetryDelayMs ?? 10_000,
      timeoutMs: options.timeoutMs ?? 10_000,
    };
    const f = options.fetch ?? globalThis.fetch;
    if (!f) throw new Error("no fetch: pass one in the options (Node.js 18 and browsers have it)");
    this.fetcher = f.bind(globalThis);
  }

  /** The same server with another credential (e.g. a player's token after login). */
  withToken(token: string | undefined): Photofinish {
    return new Photofinish({ ...this.opts, baseUrl: this.base, token, fetch: this.fetcher });
  }

  // ----- Scores -----

  /** Submits a member's score (`POST /v1/boards/{board}/scores`): its score and rank after. */
  submit(board: string, member: string, write: Submit, options: ChangeOptions = {}): Promise<WriteResult> {
    return this.json(this.keyed({ method: "POST", path: ["v1", "boards", board, "scores"], body: { ...write, member } }, options));
  }

  /** Submits up to 1000 writes in order; each entry answers a result or its own error. */
  submitBatch(board: string, entries: BatchEntry[], options: ChangeOptions = {}): Promise<BatchResult> {
    return this.json(this.keyed({ method: "POST", path: ["v1", "boards", board, "scores:batch"], body: { entries } }, options));
  }

  /** Joins the member to the board's current period (tournaments that require it, cohorts). */
  join(board: string, member: string): Promise<JoinView> {
    return this.json({ method: "POST", path: ["v1", "boards", board, "members", member, "join"], retry: true });
  }

  // ----- Reads -----

  /** A member's entry: score, rank, total, and its cohort and tier where the board has them. */
  member(board: string, member: string, options: ReadOptions = {}): Promise<MemberView> {
    return this.get(["v1", "boards", board, "members", member], { ...options });
  }

  /** A page of the board, from the top. */
  entries(board: string, options: PageOptions = {}): Promise<EntriesPage> {
    return this.get(["v1", "boards", board, "entries"], { ...options });
  }

  /** The member's neighbours: `before` rows above it and `after` below (default 5 each). */
  around(board: string, member: string, options: ReadOptions & { before?: number; after?: number } = {}): Promise<EntriesPage> {
    return this.get(["v1", "boards", board, "members", member, "around"], { ...options });
  }

  /** Up to 1000 named members at once (friends' scores); unranked names are left out. */
  queryMembers(board: string, members: string[], options: ReadOptions = {}): Promise<MembersQueryView> {
    return this.json({
      method: "POST",
      path: ["v1", "boards", board, "members:query"],
      body: { members, ...options },
      retry: true,
    });
  }

  /** The rank a score would have; on a board of several columns, every column's in order. */
  rankOfScore(board: string, score: ScoreInput | ScoreInput[], options: ReadOptions = {}): Promise<ScoreRankView> {
    const q: Query = { ...options };
    if (Array.isArray(score)) q.scores = score.map(scoreParam).join(",");
    else q.score = scoreParam(score);
    return this.get(["v1", "boards", board, "rank"], q);
  }

  /** The scores at ranks (`ranks`) and at the top percentages (`topPercent`). */
  thresholds(board: string, options: PeriodOption & { ranks?: number[]; topPercent?: number[] }): Promise<ThresholdsView> {
    return this.get(["v1", "boards", board, "thresholds"], {
      period: options.period,
      ranks: options.ranks?.join(","),
      top_percent: options.topPercent?.join(","),
    });
  }

  /** The member on several boards (or every board it is on, when `boards` is absent). */
  memberBoards(member: string, options: { boards?: string[]; ranking?: Ranking } = {}): Promise<MemberBoardsView> {
    return this.get(["v1", "members", member], { boards: options.boards?.join(","), ranking: options.ranking });
  }

  /** The member's cohort: its standings (docs/SPEC.md §14). */
  cohort(board: string, member: string, options: ReadOptions = {}): Promise<CohortView> {
    return this.get(["v1", "boards", board, "members", member, "cohort"], { ...options });
  }

  /** The board's cohorts (of one tier on a league). */
  cohorts(board: string, options: PeriodOption & { tier?: string; offset?: number; limit?: number } = {}): Promise<CohortListView> {
    return this.get(["v1", "boards", board, "cohorts"], { ...options });
  }

  /** One cohort's standings. */
  cohortEntries(board: string, cohort: number, options: PageOptions & { tier?: string } = {}): Promise<CohortView> {
    return this.get(["v1", "boards", board, "cohorts", String(cohort), "entries"], { ...options });
  }

  /** The period's partitions, sorted by key, each with its members (docs/SPEC.md §17). */
  partitions(board: string, options: PeriodOption & { offset?: number; limit?: number } = {}): Promise<PartitionListView> {
    return this.get(["v1", "boards", board, "partitions"], { ...options });
  }

  /** The period's teams in rank order, by the sum of their members' scores (docs/SPEC.md §17). */
  teams(board: string, options: PeriodOption & { ranking?: Ranking; offset?: number; limit?: number } = {}): Promise<TeamListView> {
    return this.get(["v1", "boards", board, "teams"], { ...options });
  }

  /** One team: its rank and score, and a page of its members' contributions. */
  team(board: string, team: string, options: PeriodOption & { ranking?: Ranking; offset?: number; limit?: number } = {}): Promise<TeamDetailView> {
    return this.get(["v1", "boards", board, "teams", team], { ...options });
  }

  /** The member's league tier. */
  tier(board: string, member: string): Promise<TierView> {
    return this.get(["v1", "boards", board, "members", member, "tier"], {});
  }

  /** A period's grants (docs/SPEC.md §16): `granted` is false before its close made them. */
  periodRewards(board: string, period: string, options: { offset?: number; limit?: number } = {}): Promise<PeriodRewardsView> {
    return this.get(["v1", "boards", board, "periods", period, "rewards"], { ...options });
  }

  /** The member's grants across the boards the caller may read (or `boards`), newest first. */
  memberRewards(
    member: string,
    options: { status?: "unclaimed" | "claimed" | "expired" | "all"; boards?: string[]; offset?: number; limit?: number } = {},
  ): Promise<MemberRewardsView> {
    return this.get(["v1", "members", member, "rewards"], { ...options, boards: options.boards?.join(",") });
  }

  /**
   * Claims the member's grant `id`, once: retried under one idempotency key, so a claim
   * whose answer was lost answers again rather than `already_claimed` (whose error
   * carries the grant as it was claimed, `PhotofinishError.grant`).
   */
  claim(member: string, id: string, options: ChangeOptions = {}): Promise<GrantView> {
    return this.json(this.keyed({ method: "POST", path: ["v1", "members", member, "rewards", id, "claim"] }, options));
  }

  /**
   * Everything held about the member on the boards this caller may read (its scores,
   * seats and grants in every kept period), as one document: a player exports its own.
   */
  exportMember(member: string): Promise<MemberExportView> {
    return this.get(["v1", "members", member, "export"], {});
  }

  /** A closed league period's promotions and relegations. */
  moves(board: string, period: string, options: { offset?: number; limit?: number } = {}): Promise<MovesView> {
    return this.get(["v1", "boards", board, "periods", period, "moves"], { ...options });
  }

  /** The board's settings and counts. */
  board(board: string): Promise<BoardView> {
    return this.get(["v1", "boards", board], {});
  }

  /** A page of the boards this credential may read, by name (`limit` default 100, at
   * most 1000), with `total`, how many it may read in all. */
  boards(options: { offset?: number; limit?: number } = {}): Promise<BoardList> {
    return this.get(["v1", "boards"], { ...options });
  }

  /** The board's retained periods. */
  periods(board: string): Promise<PeriodList> {
    return this.get(["v1", "boards", board, "periods"], {});
  }

  /**
   * The board's live events (`score`, `remove`, `reset`, `resync`), as they happen. The
   * stream reconnects by itself after a dropped connection or a 503, resuming after the
   * last event it gave (`Last-Event-ID`); a `resync` says events were missed, so reload.
   * End it with `options.signal`, or by leaving the `for await` loop.
   */
  events(board: string, options: EventsOptions = {}): AsyncIterable<BoardEvent> {
    return openEvents(
      {
        url: (q) => this.url(["v1", "boards", board, "events"], q),
        headers: () => this.headers(),
        fetch: this.fetcher,
        backoff: (attempt, retryAfter) => this.backoff(attempt, retryAfter),
        fail: (status, body, retryAfter) => this.refusal(status, body, retryAfter),
      },
      options,
    );
  }

  /** Whether the server is up (`/healthz`). */
  health(): Promise<Health> {
    return this.get(["healthz"], {});
  }

  // ----- Admin -----

  /** Creates the board, or answers it unchanged if it exists with this config (`created` false). */
  async createBoard(board: string, config: BoardConfigBody = {}, options: ChangeOptions = {}): Promise<{ created: boolean; board: BoardView }> {
    const res = await this.send(this.keyed({ method: "PUT", path: ["v1", "boards", board], body: config }, options));
    return { created: res.status === 201, board: parse(res.text) as BoardView };
  }

  /** Changes the board's changeable settings. */
  patchBoard(board: string, patch: BoardPatchBody): Promise<BoardView> {
    return this.json({ method: "PATCH", path: ["v1", "boards", board], body: patch, retry: true });
  }

  /** Deletes the board and all its periods. */
  async deleteBoard(board: string): Promise<void> {
    await this.send({ method: "DELETE", path: ["v1", "boards", board], retry: false });
  }

  /** Removes a member from a period (the current one by default). */
  async deleteMember(board: string, member: string, options: PeriodOption & ChangeOptions = {}): Promise<void> {
    const call = this.keyed(
      { method: "DELETE", path: ["v1", "boards", board, "members", member], query: { period: options.period } },
      options,
    );
    await this.send(call);
  }

  /** Hides the member on the board from everyone but admins and itself (docs/SPEC.md §15). */
  async hide(board: string, member: string): Promise<void> {
    await this.send({ method: "POST", path: ["v1", "boards", board, "members", member, "hide"], retry: true });
  }

  /** Shows a hidden member again. */
  async unhide(board: string, member: string): Promise<void> {
    await this.send({ method: "POST", path: ["v1", "boards", board, "members", member, "unhide"], retry: true });
  }

  /** Hides the member on every board, present and future. */
  async hideEverywhere(member: string): Promise<void> {
    await this.send({ method: "POST", path: ["v1", "members", member, "hide"], retry: true });
  }

  /** Undoes `hideEverywhere`. */
  async unhideEverywhere(member: string): Promise<void> {
    await this.send({ method: "POST", path: ["v1", "members", member, "unhide"], retry: true });
  }

  /**
   * Erases the member from every board and kept period at once (an admin key covering
   * every board): the audit log names it by an HMAC alone. Sent with an `Idempotency-Key`
   * (made here when absent), so a retry gets the first answer again.
   */
  eraseMember(member: string, options: ChangeOptions = {}): Promise<ErasedView> {
    return this.json(this.keyed({ method: "DELETE", path: ["v1", "members", member] }, options));
  }

  /** The board's hidden members. */
  hidden(board: string, options: { offset?: number; limit?: number } = {}): Promise<HiddenView> {
    return this.get(["v1", "boards", board, "hidden"], { ...options });
  }

  /** The audit log, newest first: of one board, since an instant (RFC 3339), up to `limit`. */
  audit(options: { board?: string; since?: string; limit?: number } = {}): Promise<AuditView> {
    return this.get(["v1", "audit"], { ...options });
  }

  /** Fills an empty period with `lines` (objects, or NDJSON text), all or nothing. Not retried. */
  importEntries(board: string, lines: ImportLine[] | string, options: PeriodOption = {}): Promise<ImportAnswer> {
    const text = typeof lines === "string" ? lines : lines.map((l) => stringify(l)).join("\n") + "\n";
    return this.json({
      method: "POST",
      path: ["v1", "boards", board, "import"],
      query: { period: options.period },
      rawBody: text,
      contentType: "application/x-ndjson",
      retry: false,
    });
  }

  /** A period's entries in rank order, as an import takes them. */
  async exportEntries(board: string, options: PeriodOption = {}): Promise<TransferLine[]> {
    const res = await this.send({ method: "GET", path: ["v1", "boards", board, "export"], query: { period: options.period }, retry: true });
    return res.text
      .split("\n")
      .filter((l) => l.length > 0)
      .map((l) => parse(l) as TransferLine);
  }

  // ----- Plumbing -----

  private keyed(call: Omit<Call, "retry">, options: ChangeOptions): Call {
    const key = options.idempotencyKey ?? newIdempotencyKey();
    return { ...call, headers: { ...call.headers, "Idempotency-Key": key }, retry: true };
  }

  private get<T>(path: string[], query: Query): Promise<T> {
    return this.json({ method: "GET", path, query, retry: true });
  }

  private async json<T>(call: Call): Promise<T> {
    return parse((await this.send(call)).text) as T;
  }

  private url(path: string[], query: Query = {}): string {
    for (const s of path) {
      // A URL parser removes these as path steps, whatever their escaping.
      if (s === "." || s === "..") throw new RangeError(`"${s}" cannot be a board or member name in a URL`);
    }
    const p = path.map((s) => encodeURIComponent(s).replace(/%3A/g, ":")).join("/");
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined) continue;
      if (Array.isArray(v)) v.forEach((x) => q.append(k, x));
      else q.append(k, String(v));
    }
    const qs = q.toString();
    return `${this.base}/${p}${qs ? `?${qs}` : ""}`;
  }

  private headers(): Record<string, string> {
    return this.opts.token ? { Authorization: `Bearer ${this.opts.token}` } : {};
  }

  private refusal(status: number, body: string, retryAfter: number | undefined): PhotofinishError {
    let code: ErrorCode | typeof UNEXPECTED_ANSWER = UNEXPECTED_ANSWER;
    let message = `HTTP ${status}`;
    let grant: GrantView | undefined;
    try {
      const e = (JSON.parse(body) as { error?: { code?: string; message?: string; grant?: GrantView } }).error;
      if (e?.code) code = e.code as ErrorCode;
      if (e?.message) message = e.message;
      grant = e?.grant;
    } catch {
      if (body) message = `HTTP ${status}: ${body.slice(0, 200)}`;
    }
    const refused = new PhotofinishError(status, code, message, retryAfter);
    refused.grant = grant;
    return refused;
  }

  /** The wait before try `attempt` (1-based): doubling from `retryDelayMs`, with jitter. */
  private backoff(attempt: number, retryAfter?: number): number {
    const exp = this.opts.retryDelayMs * 2 ** (attempt - 1);
    const wait = retryAfter !== undefined ? retryAfter * 1000 : exp * (0.5 + Math.random() / 2);
    return Math.min(wait, this.opts.maxRetryDelayMs);
  }

  /** Sends `call` with its retries: the answer's status, headers and text. */
  private async send(call: Call): Promise<Answer> {
    const url = this.url(call.path, call.query);
    const headers: Record<string, string> = { Accept: "application/json", ...this.headers(), ...call.headers };
    let body: string | undefined;
    if (call.rawBody !== undefined) {
      body = call.rawBody;
      headers["Content-Type"] = call.contentType ?? "application/octet-stream";
    } else if (call.body !== undefined) {
      body = stringify(call.body);
      headers["Content-Type"] = "application/json";
    }
    const key = call.headers?.["Idempotency-Key"];
    const tries = call.retry ? this.opts.retries + 1 : 1;
    for (let attempt = 1; ; attempt++) {
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), this.opts.timeoutMs);
      let answer: Answer;
      try {
        // The time limit covers the whole answer, its body included.
        const res = await this.fetcher(url, { method: call.method, headers, body, signal: controller.signal });
        answer = { status: res.status, ok: res.ok, headers: res.headers, text: await res.text() };
      } catch (e) {
        if (attempt >= tries) {
          throw new NetworkError(`${call.method} ${url}: ${(e as Error)?.message ?? e} (after ${attempt} tries)`, e, key);
        }
        await sleep(this.backoff(attempt));
        continue;
      } finally {
        clearTimeout(timer);
      }
      if (answer.ok) return answer;
      const retryAfter = retryAfterOf(answer.headers);
      const refused = this.refusal(answer.status, answer.text, retryAfter);
      refused.idempotencyKey = key;
      // A 429 was refused before anything was done: any call may be sent again. A 503 may
      // leave the outcome unknown: only calls safe to repeat are.
      // A retry that meets its first try still in flight waits for it the same way.
      const again =
        answer.status === 429 ||
        (call.retry && (answer.status === 503 || refused.code === "idempotency_key_in_flight"));
      if (again && attempt <= this.opts.retries) {
        await sleep(this.backoff(attempt, retryAfter));
        continue;
      }
      throw refused;
    }
  }
}
