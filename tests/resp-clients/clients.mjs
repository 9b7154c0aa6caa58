// ioredis and node-redis, each with its defaults, against Photofinish's RESP door
// (docs/SPEC.md §9, docs/resp.md "From Node.js"): connecting (ioredis' INFO ready check,
// node-redis' HELLO and CLIENT SETINFO), RESP2 and RESP3, pipelines, errors, and how a
// JavaScript client reads a score beyond 2^53 exactly. Run by
// crates/photofinish-server/tests/it/resp_clients.rs with the door's port; prints "ok".
import assert from "node:assert/strict";
import Redis from "ioredis";
import { createClient, RESP_TYPES } from "redis";

const port = Number(process.argv[2]);
const MAX = "9223372036854775807"; // i64::MAX: not a JS number
const MIN = "-9223372036854775808";

// A reply that came back as a JS number: near i64::MAX, but not it.
function assertRounded(n) {
  assert.equal(typeof n, "number");
  assert.ok(Math.abs(n - 2 ** 63) < 2 ** 20, `${n} is not near 2^63`);
  assert.notEqual(BigInt(n).toString(), MAX);
}

async function ioredisDefaults() {
  // Defaults: the ready check sends INFO before any command.
  const r = new Redis({ port, lazyConnect: false, maxRetriesPerRequest: 0 });
  await new Promise((ok, fail) => {
    r.once("ready", ok);
    r.once("error", fail);
  });
  const info = await r.info();
  assert.match(info, /^# Server\r\nredis_version:\d+\.\d+\.\d+\r\n/);
  assert.match(info, /\r\nloading:0\r\n/);
  assert.match(await r.info("replication"), /^# Replication\r\nrole:master\r\n/);
  assert.equal(await r.call("LB.CREATE", "io"), "OK");
  assert.equal(await r.call("LB.INCR", "io", "ann", 5), 5);
  // A pipeline of 200: answered in order.
  const p = r.pipeline();
  for (let i = 0; i < 200; i++) p.call("LB.INCR", "io", "bob", 1);
  p.call("LB.RANK", "io", "bob");
  const out = await p.exec();
  assert.equal(out.length, 201);
  out.forEach(([err], i) => assert.equal(err, null, `pipeline entry ${i}`));
  assert.equal(out[199][1], 200);
  assert.equal(out[200][1], 1);
  const row = await r.call("LB.SUBMIT", "io", "cy", 7);
  assert.deepEqual(row.slice(0, 2), [7, 2]);
  assert.equal(await r.call("LB.SCORE", "io", "nobody"), null);
  // Errors: the stable code first, as a ReplyError.
  await assert.rejects(r.call("LB.INCR", "missing", "x", 1), (e) => {
    assert.equal(e.name, "ReplyError");
    assert.match(e.message, /^ERR board_not_found /);
    return true;
  });
  await assert.rejects(r.call("LB.INCR", "io"), /wrong number of arguments for 'lb\.incr'/);
  // Past 2^53: ioredis turns an integer reply into a JS number, which rounds.
  assertRounded(await r.call("LB.SET", "io", "max", MAX));
  r.disconnect();
  // With stringNumbers every integer reply is its exact decimal text.
  const exact = new Redis({ port, stringNumbers: true });
  assert.equal(await exact.call("LB.SET", "io", "max", MAX), MAX);
  assert.equal(await exact.call("LB.SET", "io", "min", MIN), MIN);
  assert.equal(await exact.call("LB.SCORE", "io", "max"), MAX);
  assert.equal(BigInt(await exact.call("LB.SCORE", "io", "min")), -(2n ** 63n));
  const range = await exact.call("LB.RANGE", "io", 0, 1);
  assert.deepEqual(range[0].slice(0, 3), ["1", "max", MAX]);
  exact.disconnect();
}

async function nodeRedis(RESP) {
  const c = createClient({ socket: { port, reconnectStrategy: false }, RESP });
  c.on("error", () => {});
  await c.connect();
  const board = `nr${RESP}`;
  assert.equal(await c.sendCommand(["LB.CREATE", board]), "OK");
  assert.equal(await c.sendCommand(["LB.INCR", board, "ann", "5"]), 5);
  // A pipeline: commands sent together without awaiting each.
  const many = [];
  for (let i = 0; i < 200; i++) many.push(c.sendCommand(["LB.INCR", board, "bob", "1"]));
  const got = await Promise.all(many);
  assert.deepEqual(got, Array.from({ length: 200 }, (_, i) => i + 1));
  const multi = c.multi();
  multi.addCommand(["LB.INCR", board, "cy", "1"]);
  multi.addCommand(["LB.RANK", board, "cy"]);
  assert.deepEqual(await multi.execAsPipeline(), [1, 3]);
  const row = await c.sendCommand(["LB.SUBMIT", board, "dee", "300"]);
  assert.deepEqual(row.slice(0, 2), [300, 1]);
  assert.equal(row[3], RESP === 3 ? true : 1);
  assert.equal(await c.sendCommand(["LB.SCORE", board, "nobody"]), null);
  const info = await c.sendCommand(["LB.INFO", board]);
  if (RESP === 3) assert.equal(info.name ?? info.get?.("name"), board);
  else assert.equal(info[info.indexOf("name") + 1], board);
  await assert.rejects(c.sendCommand(["LB.RANK", "missing", "x"]), (e) => {
    assert.match(e.message, /^ERR board_not_found /);
    return true;
  });
  // Past 2^53: a number rounds; a type mapping of NUMBER to String keeps it exact.
  assertRounded(await c.sendCommand(["LB.SET", board, "max", MAX]));
  const exact = { typeMapping: { [RESP_TYPES.NUMBER]: String } };
  assert.equal(await c.sendCommand(["LB.SET", board, "max", MAX], exact), MAX);
  assert.equal(await c.sendCommand(["LB.SCORE", board, "max"], exact), MAX);
  assert.equal(await c.sendCommand(["LB.SET", board, "min", MIN], exact), MIN);
  assert.equal(await c.ping(), "PONG");
  await c.quit();
}

await ioredisDefaults();
await nodeRedis(2);
await nodeRedis(3);
console.log("ok");
