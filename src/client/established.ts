import type { Stage, TransportMode } from "../errors/codes.ts";
import type { Session } from "../jsonrpc/session.ts";
import type { Negotiated } from "../protocol/handshake.ts";

/** How long one establishment stage took, and whether it succeeded. */
export interface StageTiming {
  stage: Stage;
  durationMs: number;
  ok: boolean;
}

/** What a successful attempt hands to the client: an open session and what was negotiated on it. */
export interface Established extends Negotiated {
  session: Session;
  mode: TransportMode;
  stages: StageTiming[];
  /** Whether a remembered era shortened detection: `used`, `dropped` (it proved wrong) or `none`. */
  eraHint: "used" | "dropped" | "none";
  /** Which attempt succeeded (1 unless recovery made a fresh one). */
  attempt: number;
}
