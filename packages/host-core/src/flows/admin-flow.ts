import { tableIndexes } from "@weir/engine-wasm";
import {
  type AdminAction,
  FaultRequest,
  QueriesRequest,
  RetentionRequest,
  VisibilityRequest,
  WriterRequest,
} from "@weir/protocol";
import { jsonParts } from "../http/http-parts.js";
import type { IngestAction } from "../ingest/ingest-flow.js";
import type { AdminContext, FlowResult } from "./flow-context.js";
import { check, noBody } from "./request-body.js";

/** How many change-log rows an admin retention change deletes in one go. */
const PRUNE_NOW_LIMIT = 100_000;

/** The admin knobs of one namespace; each change is stored in its database before it answers. */
export function runAdmin(
  ctx: AdminContext,
  action: Exclude<AdminAction, IngestAction>,
  method: string,
  body: unknown,
): FlowResult {
  const { knobs, engine, store } = ctx;
  const ok = (value: unknown): FlowResult => ({ response: jsonParts(value), log: { admin: action } });
  switch (action) {
    case "health":
      return ok({ ok: true, engineVersion: engine.version, queryEngine: engine.queryEngine });
    case "status":
      return ok(status(ctx));
    case "writer":
      if (method === "POST") ctx.setKnob("writerEnabled", check(WriterRequest, body).enabled);
      return ok({ enabled: knobs.writerEnabled });
    case "retention": {
      ctx.setKnob("retainChanges", check(RetentionRequest, body).retainChanges);
      const pruned = store.transaction(() => engine.prune(store.db, ctx.retainChanges(), PRUNE_NOW_LIMIT));
      return ok({ retainChanges: ctx.retainChanges(), pruned });
    }
    case "visibility": {
      // What a client may see changes with the switch: every client resets once on its next
      // pull, in the transaction that stores the switch.
      const { enabled } = check(VisibilityRequest, body);
      const invalidated = enabled !== knobs.visibilityEnabled;
      if (invalidated) {
        store.transaction(() => {
          engine.invalidate(store.db);
          // Last: the knob in memory changes only once nothing else can fail.
          ctx.setKnob("visibilityEnabled", enabled);
        });
        ctx.committed([], { everyone: true });
      }
      return ok({ enabled: knobs.visibilityEnabled, invalidated });
    }
    case "queries":
      if (method === "POST") ctx.setKnob("queriesEnabled", check(QueriesRequest, body).enabled);
      return ok({ enabled: knobs.queriesEnabled });
    case "invalidate":
      noBody(body);
      store.transaction(() => engine.invalidate(store.db));
      ctx.committed([], { everyone: true });
      return ok({ invalidated: true });
    case "fault": {
      const request = check(FaultRequest, body);
      ctx.setKnob("faults", "clear" in request ? {} : { ...knobs.faults, [request.point]: request.kind });
      return ok({ faults: knobs.faults });
    }
    case "drop-next-push-response":
      noBody(body);
      ctx.setKnob("dropNextPushResponse", true);
      return ok({ dropNextPushResponse: true });
  }
}

function status(ctx: AdminContext) {
  const { knobs, engine, store } = ctx;
  return {
    engine: store.transaction(() => engine.state(store.db)),
    writer: { enabled: knobs.writerEnabled },
    visibility: { enabled: knobs.visibilityEnabled },
    queries: { enabled: knobs.queriesEnabled },
    retainChanges: ctx.retainChanges(),
    faults: knobs.faults,
    dropNextPushResponse: knobs.dropNextPushResponse,
    counters: ctx.counters,
    wakeSockets: ctx.wakeSockets(),
    caps: ctx.caps,
    sizes: { databaseBytes: ctx.sizeBytes() },
    memory: { engineBytes: engine.memoryBytes(), ...ctx.memory() },
    upstream: ctx.upstreamStatus(),
    /** The indexes on the app's tables: the app's, and those derived from the named queries. */
    indexes: tableIndexes(store.db),
  };
}
