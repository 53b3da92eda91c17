/**
 * One timer per namespace (Node: `setTimeout`; a Durable Object: its alarm). Scheduling again
 * replaces the pending timer of that namespace.
 */
export interface Scheduler {
  schedule(namespace: string, delayMs: number, task: () => void): void;
  cancel(namespace: string): void;
}
