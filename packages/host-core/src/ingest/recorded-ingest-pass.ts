import { EngineError, type Schema } from "@weir/engine-wasm";
import type { ControlStore } from "../namespace/control-store.js";
import {
  type BreakerLimits,
  BreakerOpenError,
  type BreakerState,
  closedBreaker,
  IngestBreaker,
} from "./ingest-breaker.js";
import { type IngestPassInput, type IngestPassResult, runIngestPass } from "./ingest-pass.js";
import { IngestStoppedError } from "./ingest-stopped-error.js";

/** What is stored of ingest beside the breaker, so a restart keeps it. */
export interface IngestRecord {
  /** Upstream calls made, counted before each call (a crash during one counts too). */
  attempts: number;
  /** When a pass last caught up with the upstream (epoch ms). */
  caughtUpAt: number | null;
  lastPass: {
    at: number;
    outcome: IngestPassResult["outcome"];
    rows: number;
    error?: string;
  } | null;
  /**
   * Set when ingest stopped itself (schema drift): no pass runs until an operator reopens it, or
   * the namespace opens under another schema than `schema` (a fingerprint of the one it stopped
   * under; absent in records stored before it existed).
   */
  stopped: { code: "schema_drift"; message: string; at: number; schema?: string } | null;
  /**
   * Rows left out because a value did not fit its column (counted since the namespace was
   * made), and the last one's table and reason. Absent in records stored before it existed.
   */
  quarantined?: { rows: number; last: { table: string; reason: string; at: number } | null };
}

const EMPTY_RECORD: IngestRecord = {
  attempts: 0,
  caughtUpAt: null,
  lastPass: null,
  stopped: null,
  quarantined: { rows: 0, last: null },
};

/** The namespace's ingest record as last stored. */
export function ingestRecord(control: ControlStore): IngestRecord {
  return control.record<IngestRecord>("ingest") ?? EMPTY_RECORD;
}

export function updateIngestRecord(control: ControlStore, change: Partial<IngestRecord>): void {
  control.setRecord("ingest", { ...ingestRecord(control), ...change });
}

/** The namespace's breaker, as stored in its control table, storing itself there as it moves. */
export function storedBreaker(control: ControlStore, limits: BreakerLimits, now: number): IngestBreaker {
  return new IngestBreaker(control.record<BreakerState>("breaker") ?? closedBreaker(now), limits, (state) =>
    control.setRecord("breaker", state),
  );
}

/** A short fingerprint of a schema (FNV-1a of its JSON): whether a stop was under another one. */
function schemaFingerprint(schema: Schema): string {
  const text = JSON.stringify(schema.tables);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `${text.length.toString(16)}-${hash.toString(16).padStart(8, "0")}`;
}

/**
 * A stop for schema drift under another schema than `schema` is lifted: the schema was changed
 * to fix it (a column declared), and the next pass tries again (it stops again if it still
 * drifts). Answers the stop lifted, or null.
 */
export function liftStopForNewSchema(control: ControlStore, schema: Schema): IngestRecord["stopped"] {
  const stopped = ingestRecord(control).stopped;
  if (!stopped?.schema || stopped.schema === schemaFingerprint(schema)) return null;
  updateIngestRecord(control, { stopped: null });
  return stopped;
}

/** Throws IngestStoppedError once ingest stopped itself (schema drift), until an operator reopens it. */
export function assertIngestNotStopped(control: ControlStore): void {
  const stopped = ingestRecord(control).stopped;
  if (stopped) throw new IngestStoppedError(stopped.code, stopped.message);
}

/**
 * One ingest pass (see runIngestPass) that keeps its record in the namespace's control table:
 * each upstream call counted before it goes, the last pass and when one caught up, the rows
 * quarantined, and a stop after schema drift (a drifted batch fails the same way every time).
 * Whoever holds the namespace runs it the same way: its server, or a command on its file under
 * the file's lease.
 */
export async function runRecordedIngestPass(
  control: ControlStore,
  input: Omit<IngestPassInput, "onAttempt">,
): Promise<IngestPassResult> {
  liftStopForNewSchema(control, input.schema);
  assertIngestNotStopped(control);
  try {
    const result = await runIngestPass({
      ...input,
      onAttempt: () => updateIngestRecord(control, { attempts: ingestRecord(control).attempts + 1 }),
      onQuarantined: (rows) => {
        const last = rows[rows.length - 1]!;
        const before = ingestRecord(control).quarantined?.rows ?? 0;
        updateIngestRecord(control, {
          quarantined: { rows: before + rows.length, last: { ...last, at: input.now() } },
        });
        input.onQuarantined?.(rows);
      },
    });
    const now = input.now();
    updateIngestRecord(control, {
      ...(result.outcome === "complete" ? { caughtUpAt: now } : {}),
      lastPass: {
        at: now,
        outcome: result.outcome,
        rows: result.rows,
        ...(result.error === undefined ? {} : { error: result.error }),
      },
    });
    return result;
  } catch (error) {
    // A refusal that opened the breaker is recorded; one that met it open changed nothing.
    if (!(error instanceof BreakerOpenError) || error.tripped) {
      const now = input.now();
      const message = (error as Error).message;
      if (error instanceof EngineError && error.code === "schema_drift") {
        updateIngestRecord(control, {
          stopped: { code: "schema_drift", message, at: now, schema: schemaFingerprint(input.schema) },
        });
      }
      if (!input.stopped?.()) {
        updateIngestRecord(control, {
          lastPass: { at: now, outcome: "pending_retry", rows: 0, error: message },
        });
      }
    }
    throw error;
  }
}
