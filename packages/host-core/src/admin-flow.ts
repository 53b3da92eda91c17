import { FaultRequest, parse, RetentionRequest, VisibilityRequest, WriterRequest } from "@weir/protocol";
import type { GenericSchema, InferOutput } from "valibot";
import { HttpError } from "./http-error.js";
import { jsonParts } from "./http-parts.js";
import type { FlowResult, NamespaceService } from "./namespace-service.js";

export const ADMIN_ACTIONS = {
  health: ["GET"],
  status: ["GET"],
  writer: ["GET", "POST"],
  retention: ["POST"],
  visibility: ["POST"],
  invalidate: ["POST"],
  fault: ["POST"],
  "drop-next-push-response": ["POST"],
} as const;
export type AdminAction = keyof typeof ADMIN_ACTIONS;

/** How many change-log rows an admin retention change deletes in one go. */
const PRUNE_NOW_LIMIT = 100_000;

/** The admin knobs of one namespace; each change is stored in its database before it answers. */
export function runAdmin(
  service: NamespaceService,
  action: AdminAction,
  method: string,
  body: unknown,
): FlowResult {
  const { control, engine, store } = service;
  const ok = (value: unknown): FlowResult => ({ response: jsonParts(value), log: { admin: action } });
  switch (action) {
    case "health":
      return ok({ ok: true, engineVersion: engine.version });
    case "status":
      return ok(status(service));
    case "writer":
      if (method === "POST") control.set("writerEnabled", check(WriterRequest, body).enabled);
      return ok({ enabled: control.knobs.writerEnabled });
    case "retention": {
      control.set("retainChanges", check(RetentionRequest, body).retainChanges);
      const pruned = store.transaction(() => engine.prune(store.db, service.retainChanges, PRUNE_NOW_LIMIT));
      return ok({ retainChanges: service.retainChanges, pruned });
    }
    case "visibility": {
      // What a client may see changes with the switch: every client resets once on its next
      // pull, in the transaction that stores the switch.
      const { enabled } = check(VisibilityRequest, body);
      const invalidated = enabled !== control.knobs.visibilityEnabled;
      if (invalidated) {
        store.transaction(() => {
          engine.invalidate(store.db);
          // Last: the knob in memory changes only once nothing else can fail.
          control.set("visibilityEnabled", enabled);
        });
        service.committed([]);
      }
      return ok({ enabled: control.knobs.visibilityEnabled, invalidated });
    }
    case "invalidate":
      noBody(body);
      store.transaction(() => engine.invalidate(store.db));
      service.committed([]);
      return ok({ invalidated: true });
    case "fault": {
      const request = check(FaultRequest, body);
      control.set(
        "faults",
        "clear" in request ? {} : { ...control.knobs.faults, [request.point]: request.kind },
      );
      return ok({ faults: control.knobs.faults });
    }
    case "drop-next-push-response":
      noBody(body);
      control.set("dropNextPushResponse", true);
      return ok({ dropNextPushResponse: true });
  }
}

function status(service: NamespaceService) {
  const { control, engine, store, config } = service;
  return {
    engine: store.transaction(() => engine.state(store.db)),
    writer: { enabled: control.knobs.writerEnabled },
    visibility: { enabled: control.knobs.visibilityEnabled },
    retainChanges: service.retainChanges,
    faults: control.knobs.faults,
    dropNextPushResponse: control.knobs.dropNextPushResponse,
    counters: control.counters,
    wakeSockets: service.wake.count(service.namespace),
    caps: { maxChangeRows: config.maxChangeRows, maxChangeBytes: config.maxChangeBytes },
    sizes: { databaseBytes: store.sizeBytes?.() ?? null },
    memory: { engineBytes: engine.memoryBytes(), ...service.memory() },
  };
}

function check<S extends GenericSchema>(schema: S, body: unknown): InferOutput<S> {
  const result = parse(schema, body);
  if (!result.ok) throw new HttpError("bad_request", result.message);
  return result.value;
}

function noBody(body: unknown): void {
  const empty =
    body === undefined || (typeof body === "object" && body !== null && Object.keys(body).length === 0);
  if (!empty) throw new HttpError("bad_request", "this admin route takes no body (or {})");
}
