import type { FaultKind, FaultPoint } from "@weir/protocol";

/** The admin knobs of a namespace, kept in its database (see namespace/control-store.ts). */
export interface Knobs {
  writerEnabled: boolean;
  /** Overrides the config's retainChanges; null keeps the config's. */
  retainChanges: number | null;
  visibilityEnabled: boolean;
  /** Query-aware pull: off, a pull that carries queries answers 503 queries_disabled. */
  queriesEnabled: boolean;
  /** Armed one-shot faults. */
  faults: Partial<Record<FaultPoint, FaultKind>>;
  dropNextPushResponse: boolean;
}

export const DEFAULT_KNOBS: Readonly<Knobs> = Object.freeze({
  writerEnabled: true,
  retainChanges: null,
  visibilityEnabled: true,
  queriesEnabled: true,
  faults: {},
  dropNextPushResponse: false,
});
