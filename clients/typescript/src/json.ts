/**
 * JSON that keeps scores exact. `JSON.parse` reads every number as a double, which rounds
 * integers past 2^53; the server's scores are signed 64-bit integers. So answers are read
 * by this parser, which gives the fields that hold scores (`SCORE_FIELDS`, and the values
 * of `SCORE_MAPS`, both generated from the server's OpenAPI document) as `bigint`, and
 * bodies are written by `stringify`, which writes a `bigint` as the integer it is.
 */
import { OPAQUE_FIELDS, PLAIN_OBJECTS, SCORE_FIELDS, SCORE_MAPS } from "./schema.js";

const scoreFields = new Set(SCORE_FIELDS);
const scoreMaps = new Set(SCORE_MAPS);
// Inside a plain object (a board's `partitions`) numbers are plain, as in metadata.
const opaqueFields = new Set([...OPAQUE_FIELDS, ...PLAIN_OBJECTS]);

/**
 * Where a value sits: under a score field, in a map of scores, inside a free-form object
 * (metadata: read as `JSON.parse` would), or elsewhere.
 */
type Slot = "score" | "map" | "opaque" | "other";

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  fail(what: string): never {
    throw new SyntaxError(`invalid JSON at ${this.i}: ${what}`);
  }

  ws(): void {
    while (this.i < this.s.length) {
      const c = this.s.charCodeAt(this.i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.i++;
      else break;
    }
  }

  value(slot: Slot): unknown {
    this.ws();
    const c = this.s[this.i];
    if (c === "{") return this.object(slot);
    if (c === "[") return this.array(slot);
    if (c === '"') return this.string();
    if (c === "-" || (c >= "0" && c <= "9")) return this.number(slot);
    for (const [word, v] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (this.s.startsWith(word, this.i)) {
        this.i += word.length;
        return v;
      }
    }
    return this.fail(`unexpected ${c === undefined ? "end" : JSON.stringify(c)}`);
  }

  object(slot: Slot): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.i++;
    this.ws();
    if (this.s[this.i] === "}") {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.fail("expected a key");
      const key = this.string();
      this.ws();
      if (this.s[this.i] !== ":") this.fail("expected ':'");
      this.i++;
      const inner: Slot =
        slot === "opaque" || opaqueFields.has(key)
          ? "opaque"
          : slot === "map"
            ? "score"
            : scoreMaps.has(key)
              ? "map"
              : scoreFields.has(key)
                ? "score"
                : "other";
      const v = this.value(inner);
      // As JSON.parse does: "__proto__" is a key like any other, not the prototype.
      if (key === "__proto__") Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
      else out[key] = v;
      this.ws();
      const c = this.s[this.i++];
      if (c === "}") return out;
      if (c !== ",") this.fail("expected ',' or '}'");
    }
  }

  array(slot: Slot): unknown[] {
    const out: unknown[] = [];
    this.i++;
    this.ws();
    if (this.s[this.i] === "]") {
      this.i++;
      return out;
    }
    // No answer holds an array of scores: items are read as rows, or as free-form values.
    const inner: Slot = slot === "opaque" ? "opaque" : "other";
    for (;;) {
      out.push(this.value(inner));
      this.ws();
      const c = this.s[this.i++];
      if (c === "]") return out;
      if (c !== ",") this.fail("expected ',' or ']'");
    }
  }

  string(): string {
    const start = this.i;
    this.i++;
    let escaped = false;
    while (this.i < this.s.length) {
      const c = this.s[this.i];
      if (c === "\\") {
        escaped = true;
        this.i += 2;
        continue;
      }
      if (c === '"') {
        this.i++;
        const raw = this.s.slice(start, this.i);
        return escaped ? (JSON.parse(raw) as string) : raw.slice(1, -1);
      }
      this.i++;
    }
    return this.fail("unterminated string");
  }

  number(slot: Slot): number | bigint {
    const m = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(this.s.slice(this.i, this.i + 400));
    if (!m) this.fail("bad number");
    this.i += m[0].length;
    const integer = m[2] === undefined && m[3] === undefined;
    if (slot === "score" && integer) return BigInt(m[0]);
    return Number(m[0]);
  }
}

/** Parses an answer's JSON, with scores as `bigint`. */
export function parse(text: string): unknown {
  const p = new Parser(text);
  const v = p.value("other");
  p.ws();
  if ((p as unknown as { i: number }).i !== text.length) p.fail("trailing characters");
  return v;
}

/**
 * Refuses a score given as a `number` that is not a safe integer (`RangeError`): it was
 * rounded before it got here, and would be sent as some other score.
 */
export function checkScore(v: unknown): void {
  if (typeof v === "number" && !Number.isSafeInteger(v)) {
    throw new RangeError(`score ${v} is not a safe integer: give it as a bigint or a string`);
  }
}

/**
 * Writes `value` as JSON, a `bigint` as its exact integer. A score given as a `number`
 * that is not a safe integer is refused (`RangeError`): it was rounded before it got here.
 */
export function stringify(value: unknown): string {
  const maps = new WeakSet<object>();
  const opaque = new WeakSet<object>();
  const text = JSON.stringify(value, function (this: unknown, key: string, v: unknown) {
    const holder = typeof this === "object" && this !== null ? this : undefined;
    const inside = holder !== undefined && opaque.has(holder);
    if (v !== null && typeof v === "object") {
      // Metadata is the caller's own, whatever its keys: nothing in it is checked.
      if (inside || opaqueFields.has(key)) opaque.add(v);
      else if (scoreMaps.has(key)) maps.add(v);
    }
    const scored = !inside && (scoreFields.has(key) || (holder !== undefined && maps.has(holder)));
    if (scored) checkScore(v);
    return typeof v === "bigint" ? `\u0000${v}\u0000` : v;
  });
  return text.replace(/"\\u0000(-?[0-9]+)\\u0000"/g, "$1");
}
