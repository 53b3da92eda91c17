import * as v from "valibot";
import { MAX_ID_LENGTH, MAX_MUTATOR_NAME_LENGTH } from "./limits.js";

/** A client, client group or profile id: a non-empty bounded string. */
export const IdString = v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_ID_LENGTH));

/** A mutation id: mutations of a client are numbered 1, 2, 3, ... */
export const MutationId = v.pipe(v.number(), v.safeInteger(), v.minValue(1));

/** A version number the server hands out: a non-negative safe integer. */
export const Version = v.pipe(v.number(), v.safeInteger(), v.minValue(0));

/** A cookie as a client sends it back: null, a version, or a version written in decimal. */
export const CookieInput = v.union([
  v.null(),
  Version,
  v.pipe(
    v.string(),
    v.regex(/^(0|[1-9][0-9]{0,15})$/),
    v.transform(Number),
    v.check((n: number) => Number.isSafeInteger(n), "cookie is beyond the safe integer range"),
  ),
]);

export const MutatorName = v.pipe(v.string(), v.minLength(1), v.maxLength(MAX_MUTATOR_NAME_LENGTH));

/** Any JSON value (the body was parsed as JSON, so anything here is one). */
export const JsonValue = v.unknown();
