import { parse } from "@weir/protocol";
import type { GenericSchema, InferOutput } from "valibot";
import { HttpError } from "../http/http-error.js";

/** The body as the schema reads it, or a 400 saying what is wrong. */
export function check<S extends GenericSchema>(schema: S, body: unknown): InferOutput<S> {
  const result = parse(schema, body);
  if (!result.ok) throw new HttpError("bad_request", result.message);
  return result.value;
}

/** A route that takes no body: nothing, or `{}`. */
export function noBody(body: unknown): void {
  const empty =
    body === undefined || (typeof body === "object" && body !== null && Object.keys(body).length === 0);
  if (!empty) throw new HttpError("bad_request", "this route takes no body (or {})");
}
