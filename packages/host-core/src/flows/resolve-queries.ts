import type { QueryPatchOp } from "@weir/engine-wasm";
import { type QueryPatchOperation, WireError } from "@weir/protocol";
import type { Claims } from "../auth/claims.js";
import type { PullContext } from "./flow-context.js";

/**
 * A client's query patch with each put resolved, on the server, to the AST its named query
 * answers for these args and claims. An unknown name is a 400, unless the config tolerates it:
 * then the put is dropped and its hash reported back. A query function that throws refuses
 * its args (400, with its message).
 */
export function resolveQueries(
  ctx: Pick<PullContext, "queries" | "tolerateUnknownQueries">,
  patch: readonly QueryPatchOperation[],
  claims: Claims,
): { patch: QueryPatchOp[]; unknown: string[] } {
  const resolved: QueryPatchOp[] = [];
  const unknown: string[] = [];
  for (const op of patch) {
    if (op.op !== "put") {
      resolved.push(op);
      continue;
    }
    const definition = ctx.queries && Object.hasOwn(ctx.queries, op.name) ? ctx.queries[op.name] : undefined;
    if (!definition) {
      if (!ctx.tolerateUnknownQueries) throw new WireError("bad_request", `unknown query ${op.name}`);
      unknown.push(op.hash);
      continue;
    }
    let ast: unknown;
    try {
      ast = definition(op.args, claims);
    } catch (error) {
      throw new WireError(
        "bad_request",
        `query ${op.name}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    resolved.push({ op: "put", hash: op.hash, name: op.name, args: op.args ?? null, ast });
  }
  return { patch: resolved, unknown };
}

/** The answer with the unknown queries' hashes in it (none: as it is). */
export function withUnknownQueries(body: string, unknown: readonly string[]): string {
  if (unknown.length === 0 || body.includes('"unchanged":true')) return body;
  return `{"unknownQueries":${JSON.stringify(unknown)},${body.slice(1)}`;
}

/** The config's query transform version for these claims, as the engine stores it. */
export function currentTransformVersion(
  ctx: Pick<PullContext, "queryTransformVersion">,
  claims: Claims,
): string | undefined {
  const version = ctx.queryTransformVersion;
  if (version === undefined) return undefined;
  return String(typeof version === "function" ? version(claims) : version);
}

/**
 * When the transform version moved since the group's queries were resolved, a del and a put of
 * each (a query whose name the config lost is only deleted): the put resolves it again, and the
 * engine recomputes it, sending only the rows whose membership changed.
 */
export function reresolved(
  ctx: Pick<PullContext, "engine" | "store" | "queries">,
  clientGroupID: string,
  version: string | undefined,
): QueryPatchOperation[] {
  if (version === undefined) return [];
  const stored = ctx.engine.groupQueries(ctx.store.db, clientGroupID);
  if (stored.queries.length === 0 || stored.version === version) return [];
  const patch: QueryPatchOperation[] = [];
  for (const { hash, name, args } of stored.queries) {
    patch.push({ op: "del", hash });
    if (ctx.queries && Object.hasOwn(ctx.queries, name)) patch.push({ op: "put", hash, name, args });
  }
  return patch;
}
