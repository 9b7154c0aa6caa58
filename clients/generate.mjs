#!/usr/bin/env node
// Generates the game clients' types from the server's OpenAPI document: one type per
// schema of `components.schemas`, for each client.
//
//   node clients/generate.mjs typescript|csharp <openapi.json | http://host:port/openapi.json>
//   node clients/generate.mjs typescript|csharp --check <openapi.json | URL>
//     (exit 1 if the committed file differs from a fresh generation)
//
// TypeScript (`typescript/src/schema.ts`): scores are signed 64-bit integers, so every
// `integer` schema whose range reaches below 0 (format int64 without a minimum, or a
// minimum below 0) is a `Score` (`bigint`) in answers and a `ScoreInput` (`bigint |
// number | string`) in request bodies; other integers (ranks, totals, counts, limits) are
// `number`. The names of the score fields go with them, for the client's JSON parser.
//
// C# (`csharp/Runtime/Schema.cs`): classes with a reader from, and a writer to, the JSON
// tree of `Json.cs`; every integer is a `long`, which holds a score exactly.
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const targets = {
  typescript: path.join(here, "typescript", "src", "schema.ts"),
  csharp: path.join(here, "csharp", "Runtime", "Schema.cs"),
};

async function load(source) {
  if (/^https?:\/\//.test(source)) {
    const r = await fetch(source);
    if (!r.ok) throw new Error(`${source}: HTTP ${r.status}`);
    return r.json();
  }
  return JSON.parse(await readFile(source, "utf8"));
}

/** The schemas a request body names, and every schema they reach. */
function requestSchemas(doc) {
  const seen = new Set();
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== "object") return;
    if (typeof node.$ref === "string") {
      const name = node.$ref.split("/").pop();
      if (!seen.has(name)) {
        seen.add(name);
        visit(doc.components.schemas[name]);
      }
    }
    Object.values(node).forEach(visit);
  };
  for (const item of Object.values(doc.paths ?? {})) {
    for (const op of Object.values(item)) {
      if (op && typeof op === "object" && op.requestBody) visit(op.requestBody);
    }
  }
  return seen;
}

function isScore(s) {
  if (s.type !== "integer" && !(Array.isArray(s.type) && s.type.includes("integer"))) return false;
  if (typeof s.minimum === "number") return s.minimum < 0;
  return s.format === "int64";
}

/** Enums longer than this are typed by their base type. */
const MAX_ENUM = 64;

function literal(v) {
  return v === null ? "null" : JSON.stringify(v);
}

function doc(text, indent) {
  if (!text) return "";
  const lines = String(text).replace(/\*\//g, "*\\/").split("\n");
  return `${indent}/** ${lines.join(`\n${indent} * `)} */\n`;
}

function typeOf(s, input, indent) {
  if (!s || typeof s !== "object") return "unknown";
  if (s.$ref) return s.$ref.split("/").pop();
  // A long list (the bundled time zones) reads better as its base type.
  if (s.enum && s.enum.length > MAX_ENUM) {
    const base = s.enum.includes(null) ? "string | null" : "string";
    return base;
  }
  if (s.enum) return s.enum.map(literal).join(" | ");
  // Alternatives are the type only where the schema has none of its own: beside its
  // `type` or `properties`, they are constraints (`{"required": […]}`).
  const branches = s.type || s.properties ? [] : (s.oneOf ?? s.anyOf ?? []);
  if (branches.length) {
    let parts = [...new Set(branches.map((x) => typeOf(x, input, indent)))];
    // `ScoreInput` already takes a decimal string.
    if (parts.includes("ScoreInput")) parts = parts.filter((p) => p !== "string");
    return parts.join(" | ");
  }
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.length === 0 && s.properties) types.push("object");
  const one = (t) => {
    switch (t) {
      case "null":
        return "null";
      case "boolean":
        return "boolean";
      case "string":
        return "string";
      case "number":
        return "number";
      case "integer":
        return isScore(s) ? (input ? "ScoreInput" : "Score") : "number";
      case "array":
        return `Array<${typeOf(s.items, input, indent)}>`;
      case "object":
        return objectType(s, input, indent);
      default:
        return "unknown";
    }
  };
  return types.length ? types.map(one).join(" | ") : "unknown";
}

function objectType(s, input, indent) {
  if (s.properties) {
    const required = new Set(s.required ?? []);
    const inner = indent + "  ";
    const fields = Object.entries(s.properties).map(
      ([name, p]) =>
        `${doc(p.description, inner)}${inner}${name}${required.has(name) ? "" : "?"}: ${typeOf(p, input, inner)};\n`,
    );
    return `{\n${fields.join("")}${indent}}`;
  }
  if (s.additionalProperties && typeof s.additionalProperties === "object") {
    return `Record<string, ${typeOf(s.additionalProperties, input, indent)}>`;
  }
  return "Record<string, unknown>";
}

/**
 * Names of the fields whose values are scores, of those that map names to scores, and of
 * the free-form objects (metadata) whose insides are the caller's own.
 */
function scoreFields(api) {
  const schemas = api.components.schemas;
  const fields = new Set();
  const maps = new Set();
  const opaque = new Set();
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (!node || typeof node !== "object") return;
    for (const [name, p] of Object.entries(node.properties ?? {})) {
      const branches = p.oneOf ?? p.anyOf ?? [p];
      if (branches.some(isScore)) fields.add(name);
      const ap = p.additionalProperties;
      if (ap && typeof ap === "object" && (ap.oneOf ?? ap.anyOf ?? [ap]).some(isScore)) maps.add(name);
    }
    Object.values(node).forEach(visit);
  };
  visit(schemas);
  // Free-form fields, as the schemas declare them (not the constraint stubs inside allOf).
  for (const s of Object.values(schemas)) {
    for (const [name, p] of Object.entries(s.properties ?? {})) {
      const types = Array.isArray(p.type) ? p.type : [p.type];
      const ap = p.additionalProperties;
      if (types.includes("object") && !p.properties && !(ap && typeof ap === "object")) opaque.add(name);
    }
  }
  // The parser knows a score by its field's name alone: a name must mean a score in
  // every schema or in none — but for the schemas read only as plain objects (below).
  const { names: plainObjects, schemas: insidePlain } = plainObjectFields(api, schemas);
  const plain = new Set();
  for (const [schemaName, s] of Object.entries(schemas)) {
    if (insidePlain.has(schemaName)) continue;
    for (const [name, p] of Object.entries(s.properties ?? {})) {
      const branches = p.oneOf ?? p.anyOf ?? [p];
      const integer = branches.some((b) => b.type === "integer" || (Array.isArray(b.type) && b.type.includes("integer")));
      if (integer && !branches.some(isScore)) plain.add(name);
    }
  }
  for (const name of [...fields, ...maps]) {
    if (opaque.has(name)) throw new Error(`field ${name} is both free-form and a score`);
    if (plain.has(name)) throw new Error(`field ${name} is a score in one schema and a plain integer in another`);
  }
  return {
    fields: [...fields].sort(),
    maps: [...maps].sort(),
    opaque: [...opaque].sort(),
    plainObjects: [...plainObjects].sort(),
  };
}

/** The schema a property refers to, if it is a `$ref` (or one of a nullable `oneOf`). */
function refOf(p) {
  const branches = p.oneOf ?? p.anyOf ?? [p];
  const ref = branches.find((b) => b.$ref)?.$ref;
  return ref?.split("/").pop();
}

/**
 * Plain objects: fields whose value is always an object of a schema with no score inside
 * it (a board's `partitions: {"max": M}`), and that schema referred to by nothing else.
 * The parser reads the numbers inside them as plain numbers, so a name in such a schema
 * may be a score elsewhere (a column's `max`).
 */
function plainObjectFields(api, schemas) {
  const hasScore = (name, seen = new Set()) => {
    if (seen.has(name)) return false;
    seen.add(name);
    const walk = (node) => {
      if (Array.isArray(node)) return node.some(walk);
      if (!node || typeof node !== "object") return false;
      if (node.$ref) return hasScore(node.$ref.split("/").pop(), seen);
      for (const p of Object.values(node.properties ?? {})) {
        if ((p.oneOf ?? p.anyOf ?? [p]).some(isScore)) return true;
      }
      return Object.values(node).some(walk);
    };
    return walk(schemas[name]);
  };
  // Every reference to each schema, and those made by a property of each name.
  const refs = new Map();
  const byField = new Map();
  const count = (node, field) => {
    if (Array.isArray(node)) return node.forEach((n) => count(n, field));
    if (!node || typeof node !== "object") return;
    if (node.$ref) {
      const target = node.$ref.split("/").pop();
      refs.set(target, (refs.get(target) ?? 0) + 1);
      if (field) byField.set(`${field} ${target}`, (byField.get(`${field} ${target}`) ?? 0) + 1);
    }
    for (const [k, v] of Object.entries(node)) {
      if (k === "properties") {
        for (const [name, p] of Object.entries(v)) count(p, name);
      } else if (k !== "$ref") count(v, k === "oneOf" || k === "anyOf" ? field : undefined);
    }
  };
  count(api);
  const names = new Set();
  const inside = new Set();
  for (const s of Object.values(schemas)) {
    for (const [name, p] of Object.entries(s.properties ?? {})) {
      const target = refOf(p);
      if (!target || hasScore(target)) continue;
      const all = refs.get(target) ?? 0;
      const fromHere = [...byField.entries()]
        .filter(([key]) => key.endsWith(` ${target}`) && key.split(" ")[0] === name)
        .reduce((n, [, c]) => n + c, 0);
      if (all > 0 && all === fromHere) {
        names.add(name);
        inside.add(target);
      }
    }
  }
  return { names, schemas: inside };
}

export function generateTypescript(api) {
  const schemas = api.components.schemas;
  const inputs = requestSchemas(api);
  let out = `// Generated by clients/generate.mjs from the server's /openapi.json: do not edit.
// Regenerate with \`npm run generate -- <openapi.json or URL>\`; the tests fail when this
// file differs from what the server's document generates.

/** A score: a signed 64-bit integer, exact over its whole range. */
export type Score = bigint;
/** A score as a request may give it: a bigint, a safe integer, or a decimal string. */
export type ScoreInput = bigint | number | string;

`;
  for (const name of Object.keys(schemas).sort()) {
    const s = schemas[name];
    out += doc(s.description, "");
    out += `export type ${name} = ${typeOf(s, inputs.has(name), "")};\n\n`;
  }
  const { fields, maps, opaque, plainObjects } = scoreFields(api);
  out += `/** The fields of an answer that hold a score (read as \`bigint\`). */\n`;
  out += `export const SCORE_FIELDS: readonly string[] = ${JSON.stringify(fields)};\n`;
  out += `/** The fields of an answer that map names to scores (their values read as \`bigint\`). */\n`;
  out += `export const SCORE_MAPS: readonly string[] = ${JSON.stringify(maps)};\n`;
  out += `/** The free-form fields of an answer (metadata): read as \`JSON.parse\` would. */\n`;
  out += `export const OPAQUE_FIELDS: readonly string[] = ${JSON.stringify(opaque)};\n`;
  out += `/** The fields of an answer that hold an object without scores: its numbers read as plain numbers. */\n`;
  out += `export const PLAIN_OBJECTS: readonly string[] = ${JSON.stringify(plainObjects)};\n`;
  return out;
}

// ----- C# -----

const pascal = (name) =>
  name
    .split(/[_\-]/)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join("");

function csDoc(text, indent) {
  if (!text) return "";
  const esc = String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  return `${indent}/// <summary>${esc.split("\n").join(`\n${indent}/// `)}</summary>\n`;
}

/** The leaf schemas of a schema's alternatives, `null` left out; and whether null was one. */
function leaves(s) {
  const out = [];
  let nullable = false;
  const visit = (x) => {
    if (!x || typeof x !== "object") return;
    const alts = x.type || x.properties || x.$ref ? [] : (x.oneOf ?? x.anyOf ?? []);
    if (alts.length) return alts.forEach(visit);
    const types = Array.isArray(x.type) ? x.type : x.type ? [x.type] : [];
    if (types.includes("null")) nullable = true;
    const rest = types.filter((t) => t !== "null");
    if (x.$ref || x.properties || rest.length || x.enum) out.push({ ...x, type: rest.length === 1 ? rest[0] : rest });
  };
  visit(s);
  return { leaves: out, nullable };
}

/**
 * A field's C# shape: its type, and the expressions that read it from a JSON value `v`
 * and write it as one. `optional`: the field may be absent (a value type takes `?`).
 */
function csShape(s, optional) {
  const { leaves: ls, nullable } = leaves(s);
  const opt = optional || nullable;
  const refs = ls.filter((l) => l.$ref);
  const types = new Set(ls.map((l) => (l.$ref ? "ref" : l.enum && !l.type ? "string" : l.properties ? "object" : l.type)));
  if (types.has("integer")) {
    return { type: opt ? "long?" : "long", read: (v) => `Json.ToLong${opt ? "OrNull" : ""}(${v})`, write: (x) => x };
  }
  if (ls.length === 1 || (types.size === 1 && refs.length <= 1)) {
    const l = ls[0] ?? {};
    if (l.$ref) {
      const n = l.$ref.split("/").pop();
      return { type: n, read: (v) => `${n}.FromJson(${v})`, write: (x) => `${x}?.ToJson()` };
    }
    switch (l.type) {
      case "boolean":
        return { type: opt ? "bool?" : "bool", read: (v) => `Json.ToBool${opt ? "OrNull" : ""}(${v})`, write: (x) => x };
      case "number":
        return { type: opt ? "double?" : "double", read: (v) => `Json.ToDouble${opt ? "OrNull" : ""}(${v})`, write: (x) => x };
      case "string":
        return { type: "string", read: (v) => `Json.ToStr(${v})`, write: (x) => x };
      case "array": {
        const item = csShape(l.items ?? {}, false);
        return {
          type: `List<${item.type}>`,
          read: (v) => `Json.ToList(${v}, x => ${item.read("x")})`,
          write: (x) => `Json.FromList(${x}, x => (object)${item.write("x")})`,
        };
      }
      case "object": {
        const ap = l.additionalProperties;
        if (ap && typeof ap === "object" && !l.properties) {
          const item = csShape(ap, false);
          return {
            type: `Dictionary<string, ${item.type}>`,
            read: (v) => `Json.ToMap(${v}, x => ${item.read("x")})`,
            write: (x) => `Json.FromMap(${x}, x => (object)${item.write("x")})`,
          };
        }
        break;
      }
      default:
        if (!l.type && l.enum) return { type: "string", read: (v) => `Json.ToStr(${v})`, write: (x) => x };
    }
  }
  // Free-form (metadata), or one of several shapes (a batch's result or error): the tree.
  return { type: "Dictionary<string, object>", read: (v) => `Json.ToObject(${v})`, write: (x) => x };
}

export function generateCsharp(api) {
  const schemas = api.components.schemas;
  let out = `// Generated by clients/generate.mjs from the server's /openapi.json: do not edit.
// Regenerate with \`node clients/generate.mjs csharp <openapi.json or URL>\`; the tests fail
// when this file differs from what the server's document generates.
using System.Collections.Generic;

namespace Photofinish
{
`;
  for (const name of Object.keys(schemas).sort()) {
    const s = schemas[name];
    const required = new Set(s.required ?? []);
    // Each field with its shape, worked out once for the property, reader and writer.
    const props = Object.entries(s.properties ?? {}).map(([p, ps]) => [p, ps, csShape(ps, !required.has(p))]);
    out += csDoc(s.description, "    ");
    out += `    public sealed class ${name}\n    {\n`;
    for (const [p, ps, shape] of props) {
      out += csDoc(ps.description, "        ");
      out += `        public ${shape.type} ${pascal(p)} { get; set; }\n\n`;
    }
    out += `        internal static ${name} FromJson(object json)\n        {\n`;
    out += `            var o = json as Dictionary<string, object>;\n            if (o == null) return null;\n`;
    out += `            return new ${name}\n            {\n`;
    for (const [p, , shape] of props) {
      out += `                ${pascal(p)} = ${shape.read(`Json.Get(o, "${p}")`)},\n`;
    }
    out += `            };\n        }\n\n`;
    out += `        internal Dictionary<string, object> ToJson()\n        {\n`;
    out += `            var d = new Dictionary<string, object>();\n`;
    for (const [p, , shape] of props) {
      out += `            Json.Put(d, "${p}", ${shape.write(pascal(p))});\n`;
    }
    out += `            return d;\n        }\n    }\n\n`;
  }
  const codes = schemas.ErrorDetail?.properties?.code?.enum ?? [];
  out += `    /// <summary>Every code the server may answer an error with (docs/SPEC.md §3).</summary>\n`;
  out += `    public static class ErrorCodes\n    {\n`;
  for (const c of codes) out += `        public const string ${pascal(c)} = "${c}";\n`;
  out += `    }\n}\n`;
  return out;
}

async function main() {
  const args = process.argv.slice(2);
  const lang = args.shift();
  const check = args[0] === "--check";
  const source = check ? args[1] : args[0];
  const generators = { typescript: generateTypescript, csharp: generateCsharp };
  if (!generators[lang] || !source) {
    console.error("usage: generate.mjs typescript|csharp [--check] <openapi.json | URL>");
    process.exit(2);
  }
  const target = targets[lang];
  const fresh = generators[lang](await load(source));
  const name = path.relative(here, target);
  if (check) {
    const committed = await readFile(target, "utf8").catch(() => "");
    if (committed !== fresh) {
      console.error(
        `clients/${name} is not what the server's OpenAPI document generates: run \`node clients/generate.mjs ${lang} <url>/openapi.json\``,
      );
      process.exit(1);
    }
    console.log(`clients/${name} is current`);
    return;
  }
  await writeFile(target, fresh);
  console.log(`wrote clients/${name}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await main();
}
