import {
  BreakerReopenResponse,
  ErrorBody,
  IngestPassResponse,
  NotifyResponse,
  PullResponse,
  PushResponse,
  parse,
  ReplicachePullResponse,
  VersionNotSupported,
} from "@weir/protocol";
import * as v from "valibot";

const EmptyObject = v.strictObject({});

/** The protocol's schema an answer to this route must match; undefined where it has none (most admin routes). */
function schemaFor(method: string, path: string, status: number): v.GenericSchema | undefined {
  if (status >= 400) return ErrorBody;
  if (method !== "POST" || status !== 200) return undefined;
  const route = path.split("?")[0]!.split("/").slice(2).join("/");
  switch (route) {
    case "pull":
      return PullResponse;
    case "push":
      return PushResponse;
    case "replicache/pull":
      return v.union([ReplicachePullResponse, VersionNotSupported]);
    case "replicache/push":
      return v.union([EmptyObject, VersionNotSupported]);
    case "notify":
      return NotifyResponse;
    case "admin/ingest":
    case "admin/resnapshot":
      return IngestPassResponse;
    case "admin/breaker/reopen":
      return BreakerReopenResponse;
    default:
      return undefined;
  }
}

/**
 * Checks an answer body against the wire contract (`@weir/protocol`'s schemas): every call the
 * suite makes goes through here, so a host that answers in another shape fails whatever test
 * made the call.
 */
export function checkAnswer(method: string, path: string, status: number, json: unknown, text: string): void {
  const schema = schemaFor(method, path, status);
  if (!schema) return;
  const result = parse(schema, json);
  if (!result.ok) {
    throw new Error(
      `${method} ${path} answered ${status} in a shape the protocol does not allow (${result.message}): ${text.slice(0, 300)}`,
    );
  }
}
