/** Removes the listener it was returned for; calling it again does nothing. */
export type Unsubscribe = () => void;

/** A small listener set whose members cannot break the emitter. */
export class Listeners<A extends unknown[]> {
  #set = new Set<(...args: A) => void>();
  /**
   * The members as of the last change. Emitting walks this copy, so a listener added during an
   * emit waits for the next one; it is kept between emits because every message received goes
   * through here, while members change only when someone subscribes or unsubscribes.
   */
  #snapshot: ((...args: A) => void)[] | undefined;

  add(listener: (...args: A) => void): Unsubscribe {
    this.#set.add(listener);
    this.#snapshot = undefined;
    return () => {
      if (this.#set.delete(listener)) this.#snapshot = undefined;
    };
  }

  emit(...args: A): void {
    this.#snapshot ??= [...this.#set];
    for (const l of this.#snapshot) {
      try {
        l(...args);
      } catch {
        // A listener's failure is its own; the emitter goes on.
      }
    }
  }

  clear(): void {
    this.#set.clear();
    this.#snapshot = undefined;
  }
}
