/**
 * The TypeScript client against a live Photofinish server, started by the Rust test
 * `clients_typescript` (crates/photofinish-server/tests/it/clients.rs), which passes:
 * - PF_URL: the server; PF_ADMIN: an admin key; PF_ANN, PF_BOB: players' tokens;
 * - PF_PREFIX: a prefix for this run's board names.
 * Every call of the client is made here, every way it reports a refusal, its retries
 * (that a write whose answer was lost is not counted twice), and the event stream.
 */
import { test } from "node:test";
import assert from "node:assert/strict";

import {
  Photofinish,
  PhotofinishError,
  NetworkError,
  parseJson,
  stringifyJson,
  type BoardEvent,
  type EntryView,
} from "../src/index.js";
import { readFrames } from "../src/events.js";
import { FaultyProxy } from "./proxy.js";

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this through the Rust test clients_typescript`);
  return v;
};
const URL_ = env("PF_URL");
const P = env("PF_PREFIX");
const admin = new Photofinish({ baseUrl: URL_, token: env("PF_ADMIN") });
const ann = admin.withToken(env("PF_ANN"));
const bob = admin.withToken(env("PF_BOB"));
const anonymous = admin.withToken(undefined);

/** The refusal `f` ends with. */
async function refusal(f: () => Promise<unknown>): Promise<PhotofinishError> {
  try {
    await f();
  } catch (e) {
    if (e instanceof PhotofinishError) return e;
    throw e;
  }
  assert.fail("the call was not refused");
}

const names = (rows: EntryView[]) => rows.map((e) => e.member);

test("scores are exact past 2^53 both ways, and metadata is the caller's own", () => {
  const big = 2n ** 62n + 1n;
  const v = parseJson(`{"score": ${big}, "scores": {"a": -9223372036854775808}, "rank": 3,
    "metadata": {"score": 9007199254740993, "n": [1, 2]}, "entries": [{"score": 7}]}`) as Record<string, unknown>;
  assert.equal(v.score, big);
  assert.deepEqual(v.scores, { a: -(2n ** 63n) });
  assert.equal(v.rank, 3);
  // Metadata is read as JSON.parse reads it, whatever its keys.
  assert.equal(typeof (v.metadata as { score: unknown }).score, "number");
  assert.deepEqual(v.entries, [{ score: 7n }]);
  assert.equal(stringifyJson({ score: big, s: "x\u00e9" }), `{"score":${big},"s":"x\u00e9"}`);
});

test("JSON: __proto__ is a key, unsafe numbers are refused as scores only", async () => {
  const v = parseJson(`{"metadata": {"__proto__": {"x": 1}}}`) as { metadata: Record<string, unknown> };
  assert.deepEqual(Object.keys(v.metadata), ["__proto__"]);
  assert.equal(Object.getPrototypeOf(v.metadata), Object.prototype);
  assert.throws(() => stringifyJson({ score: 2 ** 53 + 2 }), RangeError);
  assert.throws(() => stringifyJson({ entries: [{ scores: { kills: 2 ** 60 } }] }), RangeError);
  // Metadata is the caller's: a number in it is written as it is, whatever its key.
  assert.equal(stringifyJson({ score: 1, metadata: { score: 2 ** 60 } }), `{"score":1,"metadata":{"score":${2 ** 60}}}`);
});

test("the event stream's frames: CRLF split across chunks, ids without data", async () => {
  const chunks = ["event: score\r", "\ndata: {\"score\": 1}\r\nid: 7\r\n\r", "\nid: 8\n\n: keep-alive\n\n"];
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(new TextEncoder().encode(chunk));
      c.close();
    },
  });
  const frames = [];
  for await (const f of readFrames(body)) frames.push(f);
  assert.deepEqual(frames, [
    { event: "score", data: '{"score": 1}', id: "7" },
    { event: "message", data: "", id: "8" },
  ]);
});

test("boards, writes and every read", async () => {
  const b = `${P}main`;
  const made = await admin.createBoard(b, { player_writes: true, public_read: true });
  assert.equal(made.created, true);
  assert.equal(made.board.name, b);
  assert.equal((await admin.createBoard(b, { player_writes: true, public_read: true })).created, false);

  const w = await ann.submit(b, "ann", { score: 5, metadata: { level: 3 } });
  assert.deepEqual([w.member, w.score, w.rank, w.changed], ["ann", 5n, 1, true]);
  await bob.submit(b, "bob", { score: 3 });
  await admin.submitBatch(b, [
    { member: "cid", score: 9 },
    { member: "dot", score: "4" },
  ]);

  const m = await ann.member(b, "ann");
  assert.deepEqual([m.rank, m.score, m.total, m.metadata], [2, 5n, 4, { level: 3 }]);
  assert.equal((await ann.member(b, "ann", { ranking: "dense" })).rank, 2);
  const page = await anonymous.entries(b, { limit: 2 });
  assert.deepEqual(names(page.entries), ["cid", "ann"]);
  assert.equal(page.total, 4);
  assert.deepEqual(names((await ann.entries(b, { offset: 2, limit: 2 })).entries), ["dot", "bob"]);
  assert.deepEqual(names((await ann.around(b, "dot", { before: 1, after: 1 })).entries), ["ann", "dot", "bob"]);
  const q = await ann.queryMembers(b, ["bob", "zed", "cid"]);
  assert.deepEqual(names(q.entries), ["cid", "bob"]);
  assert.deepEqual(q.missing, ["zed"]);
  const r = await ann.rankOfScore(b, 6);
  assert.deepEqual([r.rank, r.score, r.total], [2, 6n, 4]);
  const t = await ann.thresholds(b, { ranks: [1, 3], topPercent: [50] });
  assert.deepEqual(
    t.thresholds.map((x) => x.score),
    [9n, 4n, 5n],
  );
  const across = await ann.memberBoards("ann", { boards: [b] });
  assert.deepEqual(
    across.boards.map((x) => [x.board, x.rank]),
    [[b, 2]],
  );
  const view = await ann.board(b);
  assert.deepEqual([view.name, view.members, view.player_writes], [b, 4, true]);
  assert.ok((await admin.boards()).boards.some((x) => x.name === b));
  // The list is paged: a page of one, and past the end an empty page, `total` in both.
  const one = await admin.boards({ limit: 1 });
  assert.equal(one.boards.length, 1);
  assert.ok(one.total >= 1);
  const past = await admin.boards({ offset: one.total });
  assert.deepEqual([past.boards.length, past.total], [0, one.total]);
  const periods = await ann.periods(b);
  assert.equal(periods.periods[0]?.id, "all");
  assert.equal((await anonymous.health()).status, "ok");
});

test("scores past 2^53, several columns", async () => {
  const b = `${P}big`;
  await admin.createBoard(b, { update: "set" });
  const big = 2n ** 62n + 1n;
  assert.equal((await admin.submit(b, "m", { score: big })).score, big);
  assert.equal((await admin.member(b, "m")).score, big);
  await admin.submit(b, "low", { score: "-9223372036854775808" });
  assert.equal((await admin.member(b, "low")).score, -(2n ** 63n));
  assert.equal((await admin.rankOfScore(b, big - 1n)).rank, 2);
  assert.throws(() => admin.rankOfScore(b, 2 ** 60), RangeError);
  await assert.rejects(() => admin.submit(b, "m", { score: 2 ** 53 + 2 }), RangeError);
  assert.equal((await admin.member(b, "m")).score, big, "nothing was sent");
  await assert.rejects(() => admin.member(b, ".."), RangeError);

  const c = `${P}cols`;
  await admin.createBoard(c, { columns: [{ name: "kills" }, { name: "time", order: "asc" }] });
  const w = await admin.submit(c, "ann", { scores: { kills: 3, time: 100 } });
  assert.deepEqual(w.scores, { kills: 3n, time: 100n });
  await admin.submit(c, "bob", { scores: { kills: 3, time: 90 } });
  assert.equal((await admin.rankOfScore(c, [3, 95])).rank, 2);
  assert.deepEqual(
    (await admin.entries(c)).entries.map((e) => e.scores?.time),
    [90n, 100n],
  );
});

test("joins, cohorts, tiers and moves", async () => {
  const t = `${P}cup`;
  await admin.createBoard(t, { join_required: true, player_writes: true });
  const notJoined = await refusal(() => ann.submit(t, "ann", { score: 1 }));
  assert.deepEqual([notJoined.status, notJoined.code], [422, "not_joined"]);
  const j = await ann.join(t, "ann");
  assert.deepEqual([j.member, j.already], ["ann", false]);
  assert.equal((await ann.join(t, "ann")).already, true);
  assert.equal((await ann.submit(t, "ann", { score: 1 })).rank, 1);

  const l = `${P}league`;
  await admin.createBoard(l, {
    reset: "daily",
    cohort_size: 2,
    league: { tiers: ["bronze", "silver"], promote: 1, demote: 1 },
  });
  for (const [m, s] of [["ann", 5], ["bob", 3], ["cid", 4]] as const) await admin.submit(l, m, { score: s });
  const mine = await admin.cohort(l, "bob");
  assert.deepEqual([mine.cohort, names(mine.entries), mine.tier], [1, ["ann", "bob"], "bronze"]);
  const list = await admin.cohorts(l, { tier: "bronze" });
  assert.equal(list.total, 2);
  assert.deepEqual(names((await admin.cohortEntries(l, 2, { tier: "bronze" })).entries), ["cid"]);
  assert.deepEqual(await admin.tier(l, "ann"), { member: "ann", tier: "bronze" });
  const period = (await admin.board(l)).period;
  const moves = await admin.moves(l, period);
  assert.deepEqual([moves.closed, moves.moves.length], [false, 0]);
});

test("partitions and teams", async () => {
  const g = `${P}clans`;
  await admin.createBoard(g, { partitions: { max: 10 }, teams: { max_size: 10 } });
  const w = await admin.submit(g, "ann", { score: 5, partition: "FR", team: "wolves" });
  assert.deepEqual([w.partition, w.partition_rank, w.team], ["FR", 1, "wolves"]);
  await admin.submit(g, "bob", { score: 7, partition: "DE", team: "wolves" });
  await admin.submit(g, "cid", { score: 9, partition: "FR", team: "bears" });
  assert.deepEqual(names((await admin.entries(g, { partition: "FR" })).entries), ["cid", "ann"]);
  const m = await admin.member(g, "ann", { partition: "FR" });
  assert.deepEqual([m.rank, m.partition, m.team], [2, "FR", "wolves"]);
  const parts = await admin.partitions(g);
  assert.deepEqual(parts.partitions.map((p) => [p.partition, p.members]), [["DE", 1], ["FR", 2]]);
  const teams = await admin.teams(g, { ranking: "competition" });
  assert.deepEqual(teams.entries.map((t) => [t.team, t.score, t.members, t.rank]), [["wolves", 12n, 2, 1], ["bears", 9n, 1, 2]]);
  const wolves = await admin.team(g, "wolves", { limit: 1 });
  assert.deepEqual([wolves.rank, wolves.score, names(wolves.entries)], [1, 12n, ["bob"]]);
  const conflict = await refusal(() => admin.submit(g, "ann", { score: 1, team: "bears" }));
  assert.deepEqual([conflict.status, conflict.code], [409, "team_conflict"]);
  const missing = await refusal(() => admin.team(g, "owls"));
  assert.deepEqual([missing.status, missing.code], [404, "team_not_found"]);
});

test("moderation, audit, delete, patch, import and export", async () => {
  const b = `${P}mod`;
  await admin.createBoard(b, { public_read: true });
  await admin.submitBatch(b, [
    { member: "ann", score: 5 },
    { member: "bob", score: 3 },
    { member: "cheat", score: 99 },
  ]);
  await admin.hide(b, "cheat");
  assert.deepEqual(names((await anonymous.entries(b)).entries), ["ann", "bob"]);
  assert.deepEqual((await admin.hidden(b)).members, ["cheat"]);
  await admin.unhide(b, "cheat");
  assert.equal((await anonymous.entries(b)).total, 3);
  await admin.hideEverywhere("cheat");
  assert.equal((await anonymous.entries(b)).total, 2);
  await admin.unhideEverywhere("cheat");
  await admin.deleteMember(b, "cheat");
  assert.equal((await refusal(() => admin.member(b, "cheat"))).code, "member_not_found");
  const patched = await admin.patchBoard(b, { retention: 4 });
  assert.equal(patched.retention, 4);
  const audit = await admin.audit({ board: b, limit: 50 });
  assert.deepEqual(
    audit.entries.map((e) => e.action).slice(0, 3),
    ["board.patch", "member.delete", "member.unhide"],
  );

  const exported = await admin.exportEntries(b);
  assert.deepEqual(
    exported.map((l) => [l.member, l.score]),
    [["ann", 5n], ["bob", 3n]],
  );
  const copy = `${P}copy`;
  await admin.createBoard(copy);
  const imported = await admin.importEntries(copy, [...exported, { member: "big", score: 2n ** 60n + 3n }]);
  assert.equal(imported.imported, 3);
  assert.equal((await admin.member(copy, "big")).score, 2n ** 60n + 3n);
  assert.equal((await admin.member(copy, "ann")).reached_at, exported[0]?.reached_at);
  await admin.deleteBoard(copy);
  assert.equal((await refusal(() => admin.board(copy))).code, "board_not_found");
  // A member erased everywhere: gone from every board, named in the audit by an HMAC.
  const gone = `${P}gone`;
  await admin.submit(b, gone, { score: 1 });
  const key = `${P}erase-once`;
  assert.deepEqual(await admin.eraseMember(gone, { idempotencyKey: key }), { member: gone, boards: 1 });
  // A retry with its key gets the first answer again; without one, nothing is left.
  assert.deepEqual(await admin.eraseMember(gone, { idempotencyKey: key }), { member: gone, boards: 1 });
  assert.deepEqual(await admin.eraseMember(gone), { member: gone, boards: 0 });
  assert.equal((await refusal(() => admin.member(b, gone))).code, "member_not_found");
  assert.equal((await admin.exportMember(gone)).boards.length, 0);
});

test("rewards: a close's grants, a member's, and a claim paid once", async () => {
  const b = `${P}rewards`;
  // A board without a reset closes at closes_at: 5 s from now, so the test waits that long.
  const closesAt = new Date(Date.now() + 5000).toISOString();
  await admin.createBoard(b, {
    player_writes: true,
    closes_at: closesAt,
    rewards: [{ from: 1, to: 1, reward: "crown", amount: 2 }, { top_percent: 100, reward: "pin" }],
  });
  await admin.submitBatch(b, [{ member: "ann", score: 9 }, { member: "bob", score: 3 }]);
  assert.equal((await admin.periodRewards(b, "all")).granted, false);
  const deadline = Date.now() + 30_000;
  let r = await admin.periodRewards(b, "all");
  while (!r.granted) {
    assert.ok(Date.now() < deadline, "the period never granted");
    await new Promise((ok) => setTimeout(ok, 200));
    r = await admin.periodRewards(b, "all");
  }
  assert.deepEqual(
    r.grants.map((g) => [g.id, g.member, g.rank, g.reward, g.amount]),
    [[`${b}:all:1`, "ann", 1, "crown", 2], [`${b}:all:2`, "bob", 2, "pin", 1]],
  );
  const mine = await ann.memberRewards("ann", { boards: [b], status: "unclaimed" });
  assert.deepEqual(mine.grants.map((g) => g.id), [`${b}:all:1`]);
  // A player claims its own, once; the same key answers again, another claim is 409.
  const claimed = await ann.claim("ann", `${b}:all:1`, { idempotencyKey: `${P}claim-1` });
  assert.deepEqual([claimed.claimed_by, typeof claimed.claimed_at], ["player", "string"]);
  assert.deepEqual(await ann.claim("ann", `${b}:all:1`, { idempotencyKey: `${P}claim-1` }), claimed);
  const again = await refusal(() => ann.claim("ann", `${b}:all:1`));
  assert.deepEqual([again.status, again.code, again.grant], [409, "already_claimed", claimed]);
  const other = await refusal(() => ann.claim("bob", `${b}:all:2`));
  assert.deepEqual([other.status, other.code], [403, "forbidden"]);
  assert.equal((await admin.memberRewards("ann", { boards: [b], status: "claimed" })).total, 1);
  // Her export: the board's period and grant as she sees herself (no audit, no actor).
  const own = await ann.exportMember("ann");
  const here = own.boards.find((x) => x.board === b);
  assert.deepEqual(
    [here?.periods.map((p) => [p.period, p.entry?.score]), here?.grants.map((g) => [g.id, g.claimed_by])],
    [[["all", 9n]], [[`${b}:all:1`, null]]],
  );
  assert.equal(own.audit, undefined);
  assert.ok(Array.isArray((await admin.exportMember("ann")).audit));
  const theirs = await refusal(() => ann.exportMember("bob"));
  assert.deepEqual([theirs.status, theirs.code], [403, "forbidden"]);
});

test("refusals arrive as the server's status and code", async () => {
  const b = `${P}main`;
  const cases: Array<[() => Promise<unknown>, number, string]> = [
    [() => ann.entries(b, { limit: 5000 }), 400, "invalid_parameter"],
    [() => ann.submit(b, "ann", { score: "1.5" }), 422, "score_not_integer"],
    [() => admin.withToken("pf_not_a_key").entries(b), 401, "unauthorized"],
    [() => ann.submit(b, "bob", { score: 1 }), 403, "forbidden"],
    [() => ann.member(b, "zed"), 404, "member_not_found"],
    [() => ann.entries(`${P}none`), 404, "board_not_found"],
    [() => admin.createBoard(b, { order: "asc" }), 409, "board_config_conflict"],
    [() => admin.submit(b, "ann", { score: 2n ** 63n - 1n }), 422, "score_overflow"],
    // What the document allows but a rule refuses is 422 under its code (docs/SPEC.md §3):
    // the board's config, two values compared.
    [() => ann.cohorts(b), 422, "invalid_parameter"],
    [() => admin.createBoard(`${P}bounds`, { min_score: 5, max_score: 4 }), 422, "invalid_config"],
  ];
  for (const [call, status, code] of cases) {
    const e = await refusal(call);
    assert.deepEqual([e.status, e.code], [status, code], e.message);
    assert.ok(e.message.length > 0);
  }
  // Nothing was changed by any of them.
  assert.equal((await admin.member(b, "ann")).score, 5n);
  assert.equal((await refusal(() => admin.board(`${P}bounds`))).code, "board_not_found");
});

test("a rate limit: 429 with Retry-After, waited out when retries allow", async () => {
  const b = `${P}main`;
  const once = new Photofinish({ baseUrl: URL_, retries: 0 });
  let limited: PhotofinishError | undefined;
  for (let i = 0; i < 20 && !limited; i++) {
    limited = await once.entries(b).then(
      () => undefined,
      (e: unknown) => (e instanceof PhotofinishError ? e : Promise.reject(e)),
    );
  }
  assert.ok(limited, "the anonymous rate was never reached");
  assert.deepEqual([limited.status, limited.code], [429, "rate_limited"]);
  assert.ok(limited.retryAfter !== undefined && limited.retryAfter >= 1);
  const patient = new Photofinish({ baseUrl: URL_, retries: 3 });
  assert.equal((await patient.entries(b)).total, 4);
});

test("a lost answer is retried under the same key and counted once", async () => {
  const b = `${P}retry`;
  await admin.createBoard(b, { update: "incr" });
  const proxy = await FaultyProxy.start(URL_);
  const proxyUrl = proxy.url;
  try {
    const viaProxy = new Photofinish({ baseUrl: proxyUrl, token: env("PF_ADMIN"), retryDelayMs: 10 });
    proxy.fail("drop");
    const w = await viaProxy.submit(b, "ann", { score: 5 });
    assert.equal(w.score, 5n);
    assert.equal(proxy.forwarded, 2, "the write reached the server twice");
    assert.equal((await admin.member(b, "ann")).score, 5n);

    proxy.fail("drop");
    const r = await viaProxy.submitBatch(b, [
      { member: "ann", score: 1 },
      { member: "bob", score: 2 },
    ]);
    assert.equal(r.results.length, 2);
    assert.equal((await admin.member(b, "ann")).score, 6n);
    assert.equal((await admin.member(b, "bob")).score, 2n);

    // A 503 is waited out and tried again.
    proxy.fail("busy", "busy");
    assert.equal((await viaProxy.submit(b, "bob", { score: 1 })).score, 3n);
    // Past the retries, the 503 is the answer.
    const strict = new Photofinish({ baseUrl: proxy.url, token: env("PF_ADMIN"), retries: 1, retryDelayMs: 10 });
    proxy.fail("busy", "busy");
    const busy = await refusal(() => strict.submit(b, "bob", { score: 1 }));
    assert.deepEqual([busy.status, busy.code], [503, "overloaded"]);
    assert.equal((await admin.member(b, "bob")).score, 3n);
    // The caller tries again later with the key the error names: counted once however
    // many times it is sent.
    assert.ok(busy.idempotencyKey);
    const again = { idempotencyKey: busy.idempotencyKey };
    assert.equal((await strict.submit(b, "bob", { score: 1 }, again)).score, 4n);
    assert.equal((await strict.submit(b, "bob", { score: 1 }, again)).score, 4n);
    assert.equal((await admin.member(b, "bob")).score, 4n);

    // An answer that is not the server's (a gateway's page) is a refusal all the same.
    proxy.fail("html");
    const page = await refusal(() => viaProxy.board(b));
    assert.deepEqual([page.status, page.code], [502, "unexpected_answer"]);
    assert.match(page.message, /Bad gateway/);

    // An import is never sent twice: its lost answer is the caller's to look into.
    const empty = `${P}imp`;
    await admin.createBoard(empty);
    proxy.fail("drop");
    await assert.rejects(() => viaProxy.importEntries(empty, [{ member: "x", score: 1 }]), NetworkError);
    assert.equal((await admin.board(empty)).members, 1);
  } finally {
    await proxy.close();
  }
  // Nobody listening: the tries end in a NetworkError.
  const gone = new Photofinish({ baseUrl: proxyUrl, retries: 1, retryDelayMs: 10 });
  await assert.rejects(() => gone.health(), NetworkError);
});

test("live events, resumed after a dropped connection", async () => {
  const b = `${P}live`;
  await admin.createBoard(b, { player_writes: true });
  const proxy = await FaultyProxy.start(URL_);
  const stop = new AbortController();
  const viaProxy = new Photofinish({ baseUrl: proxy.url, token: env("PF_ANN"), retryDelayMs: 50 });
  const seen: BoardEvent[] = [];
  const waiters: Array<() => void> = [];
  const reader = (async () => {
    for await (const e of viaProxy.events(b, { signal: stop.signal })) {
      seen.push(e);
      waiters.splice(0).forEach((w) => w());
    }
  })();
  const until = async (n: number) => {
    const deadline = Date.now() + 10_000;
    while (seen.length < n) {
      assert.ok(Date.now() < deadline, `waited for ${n} events, saw ${JSON.stringify(seen, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 200);
      });
    }
  };
  try {
    // The stream is open once a write shows on it.
    const deadline = Date.now() + 10_000;
    for (let s = 1; seen.length === 0; s++) {
      assert.ok(Date.now() < deadline, "the stream never opened");
      await ann.submit(b, "ann", { score: s });
      await new Promise((r) => setTimeout(r, 100));
    }
    const first = seen[0];
    assert.equal(first?.type, "score");
    assert.equal(typeof (first as { score: unknown }).score, "bigint");
    const before = seen.length;
    proxy.cutAll();
    await bob.submit(b, "bob", { score: 2n ** 60n });
    await until(before + 1);
    const e = seen[before];
    assert.deepEqual(e?.type === "score" && [e.member, e.score, e.rank], ["bob", 2n ** 60n, 1]);
    assert.ok(!seen.some((x) => x.type === "resync"), "the stream resumed where it stopped");
    const ids = seen.map((x) => BigInt(x.id.replace("-", "")));
    assert.deepEqual([...ids].sort((a, c) => (a < c ? -1 : 1)), ids, "ids increase");
    assert.equal(new Set(ids).size, ids.length, "no event twice");
    await admin.deleteMember(b, "bob");
    await until(before + 2);
    assert.deepEqual(seen[before + 1]?.type === "remove" && seen[before + 1], {
      type: "remove",
      id: seen[before + 1]?.id,
      member: "bob",
      period: "all",
    });
  } finally {
    stop.abort();
    await reader;
    await proxy.close();
  }
  // Leaving the loop closes the connection.
  const quiet = await FaultyProxy.start(URL_);
  try {
    const viaQuiet = new Photofinish({ baseUrl: quiet.url, token: env("PF_ANN") });
    const reading = (async () => {
      for await (const e of viaQuiet.events(b, { members: ["a,b"] })) return e;
      return undefined;
    })();
    const deadline = Date.now() + 10_000;
    // Writes until the stream shows one: only "a,b" passes the filter, not "a" or "b".
    let got: BoardEvent | undefined;
    void reading.then((e) => (got = e));
    while (!got) {
      assert.ok(Date.now() < deadline, "the filtered stream never showed a write");
      await admin.submit(b, "a", { score: 1 });
      await admin.submit(b, "a,b", { score: 1 });
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(got.type === "score" && got.member, "a,b");
    for (let i = 0; quiet.openCount > 0; i++) {
      assert.ok(i < 100, "the stream's connection stayed open after the loop ended");
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    await quiet.close();
  }

  // A refusal ends the stream with the server's error.
  const refused = await refusal(async () => {
    for await (const _ of admin.withToken("pf_not_a_key").events(b)) break;
  });
  assert.equal(refused.status, 401);
});
