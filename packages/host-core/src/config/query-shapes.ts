import type { NamedQueryShape } from "@weir/engine-wasm";
import { parseQueryAST } from "@weir/protocol";
import type { Claims } from "../auth/claims.js";
import type { WeirConfig } from "./weir-config.js";

/**
 * The args a named query is tried with, in order, when the config declares none of its own
 * (`queryIndexArgs`): none (Zero's client sends a query without args as null), an empty list,
 * one empty string (`args[0]` of a query of one text argument), an empty object. The first
 * that its function answers a query AST for gives the query's shape.
 */
const TRIED_ARGS: readonly unknown[] = [null, [], [""], {}];

/** The claims a query is resolved under for its shape: its indexes do not depend on who asks. */
const SHAPE_CLAIMS: Claims = { userID: "" };

const shapesOf = new WeakMap<object, NamedQueryShape[]>();

/**
 * The named queries as the install indexes them (an AST of each shape, resolved once per config):
 * a query whose function answers no AST for any of the args it is tried with is left out, and
 * gets its indexes when a client first puts it.
 */
export function namedQueryShapes(config: Pick<WeirConfig, "queries" | "queryIndexArgs">): NamedQueryShape[] {
  const { queries } = config;
  if (!queries) return [];
  let shapes = shapesOf.get(config);
  if (shapes) return shapes;
  shapes = [];
  for (const [name, definition] of Object.entries(queries)) {
    const declared = config.queryIndexArgs && Object.hasOwn(config.queryIndexArgs, name);
    for (const args of declared ? config.queryIndexArgs![name]! : TRIED_ARGS) {
      const ast = answered(definition, args);
      if (ast === undefined) continue;
      shapes.push({ name, ast });
      // Each declared args is a shape of its own; of the tried ones, the first answered is.
      if (!declared) break;
    }
  }
  shapesOf.set(config, shapes);
  return shapes;
}

/** The query AST `definition` answers for `args`, or undefined when it refuses them. */
function answered(definition: (args: unknown, claims: Claims) => unknown, args: unknown): unknown {
  try {
    const ast = definition(args, SHAPE_CLAIMS);
    return parseQueryAST(ast).ok ? ast : undefined;
  } catch {
    return undefined;
  }
}
