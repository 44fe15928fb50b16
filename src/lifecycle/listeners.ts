/** Removes the listener it was returned for; calling it again does nothing. */
export type Unsubscribe = () => void;

/** A small listener set whose members cannot break the emitter. */
export class Listeners<A extends unknown[]> {
  #set = new Set<(...args: A) => void>();

  add(listener: (...args: A) => void): Unsubscribe {
    this.#set.add(listener);
    return () => this.#set.delete(listener);
  }

  emit(...args: A): void {
    for (const l of [...this.#set]) {
      try {
        l(...args);
      } catch {
        // A listener's failure is its own; the emitter goes on.
      }
    }
  }

  clear(): void {
    this.#set.clear();
  }
}
