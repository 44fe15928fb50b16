import { Interrupt } from "../errors/interrupt.ts";
import type { Clock } from "./clock.ts";

/** A signal that aborts when any source does, with listeners removed by `dispose()`. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  dispose(): void;
}

/**
 * Links several signals into one. Written out (rather than `AbortSignal.any`) so the listeners it
 * adds to long-lived sources are removed as soon as the linked wait ends.
 */
export function linkSignals(...sources: (AbortSignal | undefined)[]): LinkedSignal {
  const controller = new AbortController();
  const cleanups: (() => void)[] = [];
  const dispose = () => {
    for (const c of cleanups.splice(0)) c();
  };
  for (const source of sources) {
    if (!source) continue;
    if (source.aborted) {
      dispose();
      controller.abort(source.reason);
      return { signal: controller.signal, dispose };
    }
    const onAbort = () => {
      dispose();
      controller.abort(source.reason);
    };
    source.addEventListener("abort", onAbort, { once: true });
    cleanups.push(() => source.removeEventListener("abort", onAbort));
  }
  return { signal: controller.signal, dispose };
}

/** A signal that aborts after `ms` with the given interrupt (or when `parent` aborts). */
export function timeoutSignal(
  clock: Clock,
  ms: number,
  interrupt: Interrupt,
  parent?: AbortSignal,
): LinkedSignal {
  const controller = new AbortController();
  const linked = linkSignals(parent, controller.signal);
  const timer = clock.setTimeout(() => controller.abort(interrupt), Math.max(0, ms));
  return {
    signal: linked.signal,
    dispose() {
      clock.clearTimeout(timer);
      linked.dispose();
    },
  };
}

/** Rejects with the signal's reason as soon as it aborts; the listener is removed when either settles. */
export function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    promise.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (v) => {
        signal.removeEventListener("abort", onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(e);
      },
    );
  });
}

/**
 * An abortable delay that removes its listener and timer however it ends. Its timer keeps the
 * process alive: while a caller awaits a back-off, the back-off is the work in progress.
 */
export function sleep(clock: Clock, ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = clock.setTimeout(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve();
      },
      ms,
      true,
    );
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The caller's signal, normalised so that its abort reason is an `Interrupt` of kind `caller`. */
export function callerSignal(signal: AbortSignal | undefined): LinkedSignal {
  const controller = new AbortController();
  if (!signal) return { signal: controller.signal, dispose() {} };
  // A reason that is already an Interrupt (a deadline's signal handed down) passes through as is.
  const onAbort = () =>
    controller.abort(
      signal.reason instanceof Interrupt
        ? signal.reason
        : new Interrupt("caller", "cancelled", undefined, signal.reason),
    );
  if (signal.aborted) onAbort();
  else signal.addEventListener("abort", onAbort, { once: true });
  return { signal: controller.signal, dispose: () => signal.removeEventListener("abort", onAbort) };
}
