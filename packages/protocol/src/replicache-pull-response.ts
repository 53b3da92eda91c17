import * as v from "valibot";
import { JsonValue, Version } from "./fields.js";

/** A Replicache patch operation: keys are `<table>/<primary key>` (see docs/replicache.md). */
export const ReplicachePatchOp = v.variant("op", [
  v.object({ op: v.literal("clear") }),
  v.object({ op: v.literal("put"), key: v.string(), value: JsonValue }),
  v.object({ op: v.literal("del"), key: v.string() }),
]);

export const ReplicachePullResponse = v.object({
  cookie: Version,
  lastMutationIDChanges: v.record(v.string(), v.number()),
  patch: v.array(ReplicachePatchOp),
});
export type ReplicachePullResponse = v.InferOutput<typeof ReplicachePullResponse>;

/** What a Replicache client expects when a pull/push/schema version is not served. */
export const VersionNotSupported = v.object({
  error: v.literal("VersionNotSupported"),
  versionType: v.picklist(["pull", "push", "schema"]),
});
export type VersionNotSupported = v.InferOutput<typeof VersionNotSupported>;
