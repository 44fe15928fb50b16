/** The time seam: real timers by default, a fake one in tests. */
export interface Clock {
  now(): number;
  /**
   * `keepAlive`: the timer holds the process open (a back-off between attempts, where nothing
   * else may be pending). Other timers never do: a deadline only bounds work that holds the loop.
   */
  setTimeout(fn: () => void, ms: number, keepAlive?: boolean): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms, keepAlive) => {
    const t = setTimeout(fn, ms);
    // A deadline timer never keeps a process alive on its own: the work it bounds (a socket, a
    // child) holds the loop. Only pauses that are themselves the pending work do.
    if (!keepAlive) t.unref();
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};
