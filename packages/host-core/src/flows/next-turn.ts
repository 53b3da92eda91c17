/**
 * Gives the event loop its turn: what waits (another namespace's request, a socket's frame) runs
 * first. A timer, not a microtask: I/O is polled before it fires.
 */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, 0));
