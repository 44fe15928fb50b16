/**
 * One operation's cancellation, without an EventTarget. An `AbortController` costs a signal
 * object, an event target and a listener record per waiter, and every call of the client made
 * one and added and removed listeners on it; that showed as a fifth of the client's CPU on a
 * fast server. The call path needs far less: whether it was abandoned, why, and a few callbacks
 * (the slot queue, the session's pending entry). So this holds exactly that, and makes a real
 * `AbortSignal` only when something asks for one (an HTTP `fetch`, a user handler, a caller's
 * budget handed to a nested operation).
 *
 * Like an AbortSignal: it aborts once, the first reason wins, each callback runs at most once and
 * in the order it was added, and a callback added after the abort never runs (check `aborted`
 * first). Unlike one, callbacks are added and removed with `add` / `remove` and returned nothing
 * to call: the hot path allocates no unsubscribe closure per request.
 */
export class Cancellation {
  #aborted = false;
  #reason: unknown;
  /**
   * The first callback, held apart so that the usual call (one listener, the session's pending
   * entry) allocates no array. Later ones go to `#rest`, so calling `#first` then `#rest` keeps
   * the order they were added in.
   */
  #first: (() => void) | undefined;
  #rest: (() => void)[] | undefined;
  /** Made on the first read of `signal`, aborted with this cancellation. */
  #controller: AbortController | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  /** Why it was aborted (undefined until then). */
  get reason(): unknown {
    return this.#reason;
  }

  /**
   * An AbortSignal that mirrors this cancellation: already aborted with the same reason if it has
   * been, else aborting when it does. Made once, on first read, and the same object afterwards.
   */
  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Runs `fn` once when this aborts. Never runs it if it has already aborted. */
  add(fn: () => void): void {
    if (this.#aborted) return;
    if (this.#first === undefined && this.#rest === undefined) this.#first = fn;
    else if (this.#rest) this.#rest.push(fn);
    else this.#rest = [fn];
  }

  /** Forgets `fn` (one registration of it); nothing happens if it is not registered. */
  remove(fn: () => void): void {
    if (this.#first === fn) {
      this.#first = undefined;
      return;
    }
    const rest = this.#rest;
    if (!rest) return;
    const i = rest.indexOf(fn);
    if (i !== -1) rest.splice(i, 1);
  }

  /**
   * Aborts with `reason` (the first call wins; later ones do nothing), then runs each callback.
   * A callback that throws does not stop the others: its error is rethrown on its own, the way an
   * EventTarget reports a listener's failure, so it is not lost and cannot break the abort.
   */
  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    const first = this.#first;
    this.#first = undefined;
    if (first) run(first);
    // Taken from the live list one at a time: a callback that removes a later one (as an
    // EventTarget listener may) keeps it from running.
    const rest = this.#rest;
    while (rest && rest.length > 0) run(rest.shift()!);
    this.#rest = undefined;
    this.#controller?.abort(reason);
  }
}

function run(fn: () => void): void {
  try {
    fn();
  } catch (error) {
    queueMicrotask(() => {
      throw error;
    });
  }
}

/**
 * What a wait may be bounded by: a caller's AbortSignal, or an operation's Cancellation. Code on
 * the call path takes either and reads it through the helpers below, so an operation's own
 * waits never make an AbortSignal while a caller's signal still works as it always did.
 */
export type Abortable = AbortSignal | Cancellation;

/** Runs `fn` once when `source` aborts; undo with `stopWatching(source, fn)`. */
export function watchAbort(source: Abortable, fn: () => void): void {
  if (source instanceof Cancellation) source.add(fn);
  else source.addEventListener("abort", fn, { once: true });
}

/** Removes what `watchAbort(source, fn)` added. */
export function stopWatching(source: Abortable, fn: () => void): void {
  if (source instanceof Cancellation) source.remove(fn);
  else source.removeEventListener("abort", fn);
}

/** The AbortSignal for `source`, made on demand for a Cancellation. */
export function signalOf(source: Abortable): AbortSignal {
  return source instanceof Cancellation ? source.signal : source;
}
