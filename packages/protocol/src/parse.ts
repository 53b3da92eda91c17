import * as v from "valibot";

export type ParseResult<T> = { ok: true; value: T } | { ok: false; message: string };

/** Checks `input` against `schema`; on failure, one readable line naming the first bad field. */
export function parse<S extends v.GenericSchema>(schema: S, input: unknown): ParseResult<v.InferOutput<S>> {
  const result = v.safeParse(schema, input);
  if (result.success) return { ok: true, value: result.output };
  const issue = result.issues[0];
  const path = issue.path?.map((item) => String(item.key)).join(".");
  return { ok: false, message: path ? `${path}: ${issue.message}` : issue.message };
}
