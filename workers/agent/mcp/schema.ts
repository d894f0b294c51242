/**
 * MCP tool names and input schemas, made acceptable to OpenAI-compatible providers: names
 * match `^[a-zA-Z0-9_-]{1,64}$`; schemas are objects at the top, with `properties` on every
 * object and `items` on every array, no meta keys, bounded in depth and size.
 */

/** What providers accept as a function name. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
/** Between the server name and the tool name. */
export const NAMESPACE_SEPARATOR = "__";
/** Longest tool description passed on. */
export const MAX_DESCRIPTION_CHARS = 1024;
/** Largest schema passed on, as JSON; a bigger one is replaced by a plain object schema. */
export const MAX_SCHEMA_CHARS = 16_384;
const MAX_DEPTH = 12;

/** A short stable hash (FNV-1a, base 36) to keep shortened names apart. */
function shortHash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(36).padStart(7, "0").slice(-7);
}

/**
 * The name the model sees for `tool` of `server`: `<server>__<tool>`, characters outside
 * `[a-zA-Z0-9_-]` replaced by `_`; a name over 64 characters (or one that had to change)
 * keeps its start and gets a hash of the original, so two tools never share a name.
 */
export function namespacedName(server: string, tool: string): string {
  const clean = tool.replace(/[^a-zA-Z0-9_-]/g, "_") || "tool";
  const full = `${server}${NAMESPACE_SEPARATOR}${clean}`;
  if (clean === tool && full.length <= 64) return full;
  const tail = `_${shortHash(tool)}`;
  return `${full.slice(0, 64 - tail.length)}${tail}`;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

const META_KEYS = new Set(["$schema", "$id", "$comment", "$anchor", "$dynamicAnchor", "$vocabulary"]);
const MAP_KEYS = new Set(["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"]);
const LIST_KEYS = new Set(["anyOf", "oneOf", "allOf", "prefixItems"]);
const ONE_KEYS = new Set([
  "items",
  "additionalProperties",
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "unevaluatedProperties",
  "unevaluatedItems",
  "additionalItems",
]);
// Not allowed at the top of a function's parameters by OpenAI.
const TOP_FORBIDDEN = new Set(["anyOf", "oneOf", "allOf", "not", "enum", "const", "if", "then", "else"]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Plain JSON data (enum values, defaults, examples), with non-JSON values dropped. */
function jsonData(v: unknown, depth: number): Json | undefined {
  if (v === null || typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "number") return Number.isFinite(v) ? v : undefined;
  if (depth > MAX_DEPTH) return undefined;
  if (Array.isArray(v)) return v.map((x) => jsonData(x, depth + 1) ?? null);
  if (isObject(v)) {
    const out: { [k: string]: Json } = {};
    for (const [k, x] of Object.entries(v)) {
      const j = jsonData(x, depth + 1);
      if (j !== undefined) out[k] = j;
    }
    return out;
  }
  return undefined;
}

function subschema(v: unknown, depth: number): { [k: string]: Json } {
  if (v === true || !isObject(v)) return {};
  return sanitiseNode(v, depth);
}

function sanitiseNode(node: Record<string, unknown>, depth: number): { [k: string]: Json } {
  if (depth > MAX_DEPTH) return {};
  const out: { [k: string]: Json } = {};
  for (const [key, value] of Object.entries(node)) {
    if (META_KEYS.has(key)) continue;
    if (MAP_KEYS.has(key)) {
      if (!isObject(value)) continue;
      const map: { [k: string]: Json } = {};
      for (const [name, sub] of Object.entries(value)) if (sub !== false) map[name] = subschema(sub, depth + 1);
      out[key] = map;
    } else if (LIST_KEYS.has(key)) {
      if (Array.isArray(value)) out[key] = value.map((sub) => subschema(sub, depth + 1));
    } else if (ONE_KEYS.has(key)) {
      // `additionalProperties: false` is meaningful; other booleans are "anything".
      if (typeof value === "boolean") out[key] = key === "additionalProperties" ? value : {};
      else if (key === "items" && Array.isArray(value)) out.prefixItems = value.map((sub) => subschema(sub, depth + 1));
      else if (isObject(value)) out[key] = subschema(value, depth + 1);
    } else if (key === "required") {
      if (Array.isArray(value)) out.required = value.filter((r): r is string => typeof r === "string");
    } else if (key === "description" || key === "title") {
      if (typeof value === "string") out[key] = value.slice(0, MAX_DESCRIPTION_CHARS);
    } else {
      const data = jsonData(value, depth + 1);
      if (data !== undefined) out[key] = data;
    }
  }
  const types = Array.isArray(out.type) ? out.type : [out.type];
  if ((types.includes("object") || out.properties !== undefined) && !isObject(out.properties)) out.properties = {};
  if (types.includes("array") && out.items === undefined && out.prefixItems === undefined) out.items = {};
  return out;
}

/**
 * An MCP tool's `inputSchema` as function parameters: always `type: "object"` with
 * `properties`, no top-level combinators, meta keys dropped, boolean subschemas turned into
 * `{}`. A schema that is not an object, or too large or deep, becomes
 * `{"type":"object","properties":{}}` (the server still validates what it gets).
 */
export function sanitiseInputSchema(schema: unknown): Record<string, unknown> {
  const plain = { type: "object", properties: {} };
  if (!isObject(schema)) return plain;
  const out = sanitiseNode(schema, 0);
  for (const key of TOP_FORBIDDEN) delete out[key];
  out.type = "object";
  if (!isObject(out.properties)) out.properties = {};
  if (Array.isArray(out.required)) {
    const props = out.properties as Record<string, unknown>;
    out.required = out.required.filter((r) => typeof r === "string" && r in props);
  }
  return JSON.stringify(out).length <= MAX_SCHEMA_CHARS ? out : plain;
}

/** A tool description for the model: trimmed, at most {@link MAX_DESCRIPTION_CHARS} characters. */
export function toolDescription(description: unknown, fallback: string): string {
  const text = typeof description === "string" ? description.trim() : "";
  const use = text || fallback;
  return use.length <= MAX_DESCRIPTION_CHARS ? use : `${use.slice(0, MAX_DESCRIPTION_CHARS - 1)}…`;
}
