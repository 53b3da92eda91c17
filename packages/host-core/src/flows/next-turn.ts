/**
 * Gives the event loop its turn: what waits (another namespace's request, a socket's frame) runs
 * first. A timer, not a microtask: I/O is polled before it fires.
 */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * Gives I/O its turn without a timer's wait: an immediate set from another immediate runs after
 * the loop's next poll, so the requests that arrived meanwhile are read first, and timers due
 * fire first too. A pull that stops often (read in pages) pays no timer's millisecond a stop
 * when nothing waits. Where there is no `setImmediate` (workerd without Node's APIs), a timer's
 * turn.
 */
export const pollTurn = (): Promise<void> =>
  typeof setImmediate === "function"
    ? new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)))
    : nextTurn();
