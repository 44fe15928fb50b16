/**
 * Checking a tool's `structuredContent` against its `outputSchema`. The default validator is
 * @cfworker/json-schema: it interprets schemas (no code generation, so a server's schema never
 * becomes code), supports drafts 4, 7, 2019-09 and 2020-12, loads in about 10 ms and checks a
 * typical result in microseconds. It is loaded on first use, so a client that never meets an
 * output schema never pays for it. The caller may replace it (`validateOutput`) or switch it off.
 */
import { configError } from "../errors/failures.ts";
import type { JsonObject } from "../jsonrpc/messages.ts";
import type { OutputValidator } from "../options/output-validator.ts";
import { type QuickCheck, quickCheckOf } from "./schema-fast-path.ts";

/** The validator's findings on a mismatch: kept as the error's `cause`, never in its message. */
export class OutputSchemaMismatch extends Error {
  override readonly name = "OutputSchemaMismatch";
  constructor(readonly errors: readonly string[]) {
    super("structuredContent does not match the tool's outputSchema");
  }
}

/** Most findings kept from one validation: enough to debug, bounded whatever the value. */
const MAX_FINDINGS = 20;

type Draft = "4" | "7" | "2019-09" | "2020-12";

/**
 * The dialect a schema declares in `$schema`; 2020-12 when it declares none, as MCP specifies.
 * Matching on the draft's name rather than the whole URI accepts `http` and `https`, with and
 * without the trailing `#`.
 */
export function draftOf(schema: JsonObject): Draft {
  const declared = typeof schema.$schema === "string" ? schema.$schema : "";
  if (declared.includes("draft-07")) return "7";
  if (declared.includes("draft-04")) return "4";
  if (declared.includes("2019-09")) return "2019-09";
  return "2020-12";
}

interface CompiledValidator {
  validate(instance: unknown): {
    valid: boolean;
    errors: { keyword: string; instanceLocation: string }[];
  };
}
type ValidatorClass = new (schema: object, draft: Draft, shortCircuit: boolean) => CompiledValidator;

let shared: Promise<OutputValidator> | undefined;

/**
 * The default validator, once its module is loaded. Compiled schemas are kept per schema object
 * (the client keeps one object per listed tool, replaced when the tools are listed again), so a
 * tool's schema is compiled once. The schema is copied first: the library annotates what it is given.
 */
export function defaultValidator(): Promise<OutputValidator> {
  shared ??= import("@cfworker/json-schema").then((m) =>
    compiledBy(m.Validator as unknown as ValidatorClass),
  );
  return shared;
}

function compiledBy(Validator: ValidatorClass): OutputValidator {
  const compiled = new WeakMap<JsonObject, { quick: QuickCheck | undefined; full: CompiledValidator }>();
  return (schema, value) => {
    let v = compiled.get(schema);
    if (!v) {
      v = {
        quick: quickCheckOf(schema),
        full: new Validator(structuredClone(schema), draftOf(schema), false),
      };
      compiled.set(schema, v);
    }
    // A plain schema's quick "valid" is final; anything else gets the full validator's findings.
    if (v.quick?.(value)) return { valid: true };
    const result = v.full.validate(value);
    if (result.valid) return { valid: true };
    return {
      valid: false,
      errors: result.errors
        .slice(0, MAX_FINDINGS)
        .map((e) => `${e.instanceLocation || "#"}: failed ${e.keyword}`),
    };
  };
}

/** Validates the `validateOutput` option: a validator, `false` (no checking), or absent (the default). */
export function outputValidationOf(value: unknown): OutputValidator | false | undefined {
  if (value === undefined || value === false) return value;
  if (typeof value === "function") return value as OutputValidator;
  throw configError("invalid_option", "validateOutput must be a function or false");
}
