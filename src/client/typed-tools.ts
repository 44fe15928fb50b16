/**
 * A typed view over a client's tools, made from the `Tools` map that `tether types` writes (each
 * tool's name to `{ input, output }`): `call` takes only a name the map has and that tool's
 * arguments, and types the result's `structuredContent` as the tool's output. Nothing is added at
 * run time: each call is `client.callTool`, whose result is checked against the output schema the
 * server declares now (M3), which is what makes the output type hold.
 */
import type { CallOptions, Client, ToolArguments } from "./api.ts";
import type { CallToolResult } from "./results.ts";

/** What a map of tools must be: each tool's arguments an object `callTool` takes. */
export type ToolShapes<T> = { [K in keyof T]: { input: ToolArguments; output: unknown } };

/** A tool's result, its `structuredContent` typed as the tool's output. */
export type TypedCallResult<Output> = Omit<CallToolResult, "structuredContent"> & {
  /**
   * Checked against the tool's output schema when it declares one (unless the tool failed, or the
   * client was connected with `validateOutput: false`).
   */
  structuredContent?: Output;
};

/** A call's arguments and options; the arguments may be left out when the tool requires none. */
export type TypedCallArgs<Input> =
  // biome-ignore lint/complexity/noBannedTypes: `{}` is exactly "an object with no required member"
  {} extends Input ? [args?: Input, options?: CallOptions] : [args: Input, options?: CallOptions];

/** The typed view: see typedTools. */
export interface TypedTools<T extends ToolShapes<T>> {
  /** The client the view calls through. */
  readonly client: Client;
  /** Calls one tool, once, exactly as `client.callTool(name, args, options)`. */
  call<N extends keyof T & string>(
    name: N,
    ...rest: TypedCallArgs<T[N]["input"]>
  ): Promise<TypedCallResult<T[N]["output"]>>;
}

/**
 * `client`'s tools, typed by `T`, the `Tools` map `tether types` wrote for its server:
 * `typedTools<Tools>(client).call("get-sum", { a: 2, b: 3 })`. A name the map lacks, an argument
 * of the wrong type or a missing required one is a compile error.
 */
export function typedTools<T extends ToolShapes<T>>(client: Client): TypedTools<T> {
  return {
    client,
    call: (name: string, args?: ToolArguments, options?: CallOptions) =>
      // The output type holds as far as the client checks the result (see TypedCallResult).
      client.callTool(name, args, options) as Promise<TypedCallResult<never>>,
  };
}
