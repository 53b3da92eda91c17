import {
  type AudienceProbe,
  type Schema,
  type Visibility,
  type VisibilityTerm,
  visibilityTerms,
} from "@weir/engine-wasm";
import type { Claims } from "../auth/claims.js";

/**
 * What a socket (or a Zero group) must be woken for: its user's commits, and the changes its
 * visibility filters can admit (`terms`, engine-wasm's `visibilityTerms`); null terms: every
 * change (no filters, or filters that could not be read).
 */
export interface Subscription {
  userID: string;
  terms: readonly VisibilityTerm[] | null;
}

/** The subscription of a caller with these claims under the config's visibility. */
export function subscriptionFor(
  schema: Schema,
  visibility: ((claims: Claims) => Visibility) | undefined,
  claims: Claims,
): Subscription {
  if (!visibility) return { userID: claims.userID, terms: null };
  try {
    return { userID: claims.userID, terms: visibilityTerms(schema, visibility(claims)) };
  } catch {
    // A filter the config cannot build for these claims fails their pulls; waking them is harmless.
    return { userID: claims.userID, terms: null };
  }
}

/** The probe a term needs answered about a commit, and its id (equal probes, equal ids). */
export function termProbe(term: VisibilityTerm): { id: string; probe: AudienceProbe } | null {
  if (term.kind === "any") return null;
  const probe: AudienceProbe =
    term.kind === "key"
      ? { table: term.table, kind: "key", column: term.column, where: term.where }
      : { table: term.table, kind: "predicate", where: term.where };
  return { id: JSON.stringify(probe), probe };
}
