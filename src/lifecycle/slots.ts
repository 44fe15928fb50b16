/**
 * A bound on requests in flight. `acquire` waits for a free slot (back-pressure) until its
 * signal aborts; the waiter's listener is removed however the wait ends.
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

  acquire(signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(signal.reason);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const next = this.#waiters.shift();
      if (next) next.grant();
      else this.#used--;
    };
    if (this.#used < this.#max) {
      this.#used++;
      return Promise.resolve(release);
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve(release);
        },
      };
      const onAbort = () => {
        const i = this.#waiters.indexOf(waiter);
        if (i !== -1) this.#waiters.splice(i, 1);
        reject(signal.reason);
      };
      this.#waiters.push(waiter);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}
