import { protocolError } from "../errors/failures.ts";
import type { Redactor } from "../errors/redact.ts";
import type { TetherError } from "../errors/tether-error.ts";

/** A result the server sent that the client cannot use: the request ran, so the effect is `done`. */
export function malformedResult(redactor: Redactor, message: string): TetherError {
  return protocolError(
    { stage: "call", phase: "call", redactor, effect: "done" },
    "malformed_result",
    message,
  );
}
