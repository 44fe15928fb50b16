import { type Abortable, stopWatching, watchAbort } from "./cancellation.ts";

/**
 * A bound on requests in flight. `tryAcquire` takes a free slot at once; `acquire` waits for one
 * (back-pressure) until its signal aborts, and the waiter's listener is removed however the wait
 * ends.
 */
export class Slots {
  readonly #max: number;
  #used = 0;
  readonly #waiters: { grant: () => void }[] = [];

  constructor(max: number) {
    this.#max = max;
  }

  get inFlight(): number {
    return this.#used;
  }

  get waiting(): number {
    return this.#waiters.length;
  }

  /**
   * A slot now, or undefined when all are taken. The common case on the call path: taking it
   * synchronously spares every call a promise and a turn of the microtask queue.
   */
  tryAcquire(): (() => void) | undefined {
    if (this.#used >= this.#max || this.#waiters.length > 0) return undefined;
    this.#used++;
    return this.#release();
  }

  acquire(signal: Abortable): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    const now = this.tryAcquire();
    if (now) return Promise.resolve(now);
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          stopWatching(signal, onAbort);
          resolve(this.#release());
        },
      };
      const onAbort = () => {
        const i = this.#waiters.indexOf(waiter);
        if (i !== -1) this.#waiters.splice(i, 1);
        reject(signal.reason);
      };
      this.#waiters.push(waiter);
      watchAbort(signal, onAbort);
    });
  }

  /** Gives the slot to the next waiter, or frees it; calling it again does nothing. */
  #release(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      if (next) next.grant();
      else this.#used--;
    };
  }
}
