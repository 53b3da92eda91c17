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
