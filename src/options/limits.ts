import { configError } from "../errors/failures.ts";

/**
 * Every numeric limit: its default and its maximum. An absent value means the default, never
 * "unlimited"; a value must be a finite positive integer no larger than the maximum.
 */
export const LIMITS = {
  /** Baseline time budget of each phase, in ms. */
  timeoutMs: { default: 30_000, max: 3_600_000 },
  /** Baseline byte ceiling for one response, raw bytes as received. */
  maxResponseBytes: { default: 16 * 1024 * 1024, max: 1024 * 1024 * 1024 },
  /** Ceiling for one unsolicited frame (notification or server request), in bytes. */
  maxFrameBytes: { default: 1024 * 1024, max: 64 * 1024 * 1024 },
  /** How long a `server/discover` probe may stay silent before a stdio server counts as legacy, in ms. */
  probeTimeoutMs: { default: 2_000, max: 600_000 },
  /** How long one attempt's handshake (discover or initialize) may take, in ms. */
  handshakeTimeoutMs: { default: 15_000, max: 3_600_000 },
  /** Most tools accepted from one server, over all pages. */
  maxTools: { default: 10_000, max: 1_000_000 },
  /** Most pages followed for one list. */
  maxListPages: { default: 100, max: 10_000 },
  /** Ceiling for one tool's input schema, serialised, in bytes. */
  maxToolSchemaBytes: { default: 256 * 1024, max: 16 * 1024 * 1024 },
  /** Requests one client has in flight at once; more wait for a slot (back-pressure). */
  maxInFlight: { default: 64, max: 10_000 },
  /** Most `input_required` rounds for one request (2026-07-28). */
  maxInputRounds: { default: 8, max: 100 },
} as const;

export type LimitName = keyof typeof LIMITS;

/**
 * Longest `nextCursor` a listing follows, in characters. Cursors are opaque tokens the server
 * hands back to itself: an offset or a database continuation token in base64, tens to a few
 * thousand characters. The bound is generous for those and still a speck beside the byte
 * ceilings, so a server cannot make every page of a listing carry megabytes there and back.
 */
export const MAX_CURSOR_CHARS = 16_384;

/** Validates one limit: absent means the default; otherwise a finite positive integer within the maximum. */
export function limit(name: string, value: unknown, which: LimitName): number {
  const rule = LIMITS[which];
  if (value === undefined) return rule.default;
  if (typeof value !== "number" || !Number.isFinite(value) || !Number.isInteger(value) || value <= 0) {
    throw configError("invalid_limit", `${name} must be a positive whole number (at most ${rule.max})`);
  }
  if (value > rule.max) throw configError("invalid_limit", `${name} must be at most ${rule.max}`);
  return value;
}
