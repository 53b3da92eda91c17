/**
 * Thrown by a mutator to refuse a mutation. Its writes roll back, the client's mutation id still
 * advances (so the client's queue moves on), and the client receives `{ error: "app", message, details }`.
 */
export class MutatorError extends Error {
  readonly details: unknown;

  constructor(message: string, details?: unknown) {
    super(message);
    this.name = "MutatorError";
    this.details = details;
  }
}
