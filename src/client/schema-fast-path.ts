/**
 * A quick yes for the plain output schemas most tools declare. The default validator interprets
 * every keyword and builds a JSON pointer for every property it visits, valid or not, which costs
 * more than the rest of a small call. Most output schemas use a handful of keywords (types,
 * properties, required, additionalProperties, items, enum, const, annotations); for those this
 * builds a checker from closures once per schema (no code generation). Its "valid" is final; on
 * anything else, or a schema with any other keyword anywhere, the full validator decides and
 * reports its findings.
 */
import type { JsonObject, JsonValue } from "../jsonrpc/messages.ts";

/** Checks one value; true only when the full validator would find nothing. */
export type QuickCheck = (value: unknown) => boolean;

/** Keywords that assert nothing: they never make a value invalid. */
const ANNOTATIONS = new Set([
  "$schema",
  "$id",
  "$comment",
  "title",
  "description",
  "default",
  "examples",
  "deprecated",
  "readOnly",
  "writeOnly",
]);
const HANDLED = new Set(["type", "properties", "required", "additionalProperties", "items", "enum", "const"]);
const TYPES = new Set(["object", "array", "string", "number", "integer", "boolean", "null"]);
/** Nesting beyond this is left to the full validator (it has its own bounds). */
const MAX_DEPTH = 32;

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function typeTest(type: string): (v: unknown) => boolean {
  switch (type) {
    case "object":
      return isObject;
    case "array":
      return Array.isArray;
    case "string":
      return (v) => typeof v === "string";
    case "number":
      return (v) => typeof v === "number" && Number.isFinite(v);
    case "integer":
      return (v) => typeof v === "number" && Number.isInteger(v);
    case "boolean":
      return (v) => typeof v === "boolean";
    default:
      return (v) => v === null;
  }
}

/** Scalars only: equality is then `===` (or both null), as the full validator's deep equality agrees. */
function scalar(v: JsonValue): boolean {
  return (
    v === null ||
    typeof v === "string" ||
    typeof v === "boolean" ||
    (typeof v === "number" && Number.isFinite(v))
  );
}

/**
 * The quick checker for a schema, or undefined when the schema uses anything beyond the plain
 * subset (the full validator then checks every value).
 */
export function quickCheckOf(schema: JsonValue, depth = 0): QuickCheck | undefined {
  // Boolean schemas are taken only as additionalProperties, their meaning in every draft.
  if (!isObject(schema) || depth > MAX_DEPTH) return undefined;
  const tests: QuickCheck[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(key)) continue;
    if (!HANDLED.has(key)) return undefined;
    if (key === "type") {
      const names = typeof value === "string" ? [value] : Array.isArray(value) ? value : undefined;
      if (!names || names.length === 0 || !names.every((n) => typeof n === "string" && TYPES.has(n)))
        return undefined;
      const each = (names as string[]).map(typeTest);
      tests.push(each.length === 1 ? each[0]! : (v) => each.some((t) => t(v)));
    } else if (key === "enum") {
      if (!Array.isArray(value) || !value.every(scalar)) return undefined;
      const members = new Set(value);
      tests.push((v) => members.has(v as JsonValue));
    } else if (key === "const") {
      if (!scalar(value)) return undefined;
      tests.push((v) => v === value);
    } else if (key === "required") {
      if (!Array.isArray(value) || !value.every((n) => typeof n === "string")) return undefined;
      const names = value as string[];
      tests.push((v) => !isObject(v) || names.every((n) => Object.hasOwn(v, n)));
    } else if (key === "items") {
      // The single-schema form only; the array form means different things across drafts.
      if (Array.isArray(value)) return undefined;
      const item = quickCheckOf(value, depth + 1);
      if (!item) return undefined;
      tests.push((v) => !Array.isArray(v) || v.every((x) => item(x)));
    }
  }
  // properties and additionalProperties go together: "additional" means not named in properties.
  const props = schema.properties;
  const additional = schema.additionalProperties;
  if (props !== undefined || additional !== undefined) {
    if (props !== undefined && !isObject(props)) return undefined;
    const named = new Map<string, QuickCheck>();
    for (const [name, sub] of Object.entries(props ?? {})) {
      const check = quickCheckOf(sub, depth + 1);
      if (!check) return undefined;
      named.set(name, check);
    }
    const rest =
      additional === undefined || additional === true
        ? undefined
        : additional === false
          ? () => false
          : quickCheckOf(additional, depth + 1);
    if (additional !== undefined && !rest) return undefined;
    tests.push((v) => {
      if (!isObject(v)) return true;
      for (const key of Object.keys(v)) {
        const check = named.get(key) ?? rest;
        if (check && !check(v[key])) return false;
      }
      return true;
    });
  }
  return tests.length === 1 ? tests[0]! : (v) => tests.every((t) => t(v));
}
