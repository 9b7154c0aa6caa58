#!/usr/bin/env node
// Generates src/schema.ts from the server's OpenAPI document: one TypeScript type per
// schema of `components.schemas`, and the names of the fields that hold scores.
//
//   node scripts/generate.mjs <openapi.json | http://host:port/openapi.json>
//   node scripts/generate.mjs --check <openapi.json | URL>   (exit 1 if src/schema.ts differs)
//
// Scores are signed 64-bit integers: every `integer` schema whose range reaches below 0
// (format int64 without a minimum, or a minimum below 0) is a `Score` (`bigint`) in
// answers and a `ScoreInput` (`bigint | number | string`) in request bodies. Other
// integers (ranks, totals, counts, limits) are `number`.
import { readFile, writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const target = path.join(here, "..", "src", "schema.ts");

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
function scoreFields(schemas) {
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
  for (const name of [...fields, ...maps]) {
    if (opaque.has(name)) throw new Error(`field ${name} is both free-form and a score`);
  }
  return { fields: [...fields].sort(), maps: [...maps].sort(), opaque: [...opaque].sort() };
}

export function generate(api) {
  const schemas = api.components.schemas;
  const inputs = requestSchemas(api);
  let out = `// Generated by scripts/generate.mjs from the server's /openapi.json: do not edit.
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
  const { fields, maps, opaque } = scoreFields(schemas);
  out += `/** The fields of an answer that hold a score (read as \`bigint\`). */\n`;
  out += `export const SCORE_FIELDS: readonly string[] = ${JSON.stringify(fields)};\n`;
  out += `/** The fields of an answer that map names to scores (their values read as \`bigint\`). */\n`;
  out += `export const SCORE_MAPS: readonly string[] = ${JSON.stringify(maps)};\n`;
  out += `/** The free-form fields of an answer (metadata): read as \`JSON.parse\` would. */\n`;
  out += `export const OPAQUE_FIELDS: readonly string[] = ${JSON.stringify(opaque)};\n`;
  return out;
}

async function main() {
  const args = process.argv.slice(2);
  const check = args[0] === "--check";
  const source = check ? args[1] : args[0];
  if (!source) {
    console.error("usage: generate.mjs [--check] <openapi.json | URL>");
    process.exit(2);
  }
  const fresh = generate(await load(source));
  if (check) {
    const committed = await readFile(target, "utf8").catch(() => "");
    if (committed !== fresh) {
      console.error(
        "src/schema.ts is not what the server's OpenAPI document generates: run `npm run generate -- <url>/openapi.json`",
      );
      process.exit(1);
    }
    console.log("src/schema.ts is current");
    return;
  }
  await writeFile(target, fresh);
  console.log(`wrote ${target}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  await main();
}
