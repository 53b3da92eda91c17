import * as v from "valibot";

/**
 * The mutators' arguments. The same checks run in the browser, where a refusal rejects the
 * `rep.mutate` call, and on the server, where it is recorded as an application error.
 */
const id = v.pipe(v.string(), v.minLength(1), v.maxLength(64));
const text = v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(500));

export const CreateTodoArgs = v.strictObject({
  id,
  text,
  done: v.boolean(),
  sort: v.pipe(v.number(), v.finite()),
});
export type CreateTodoArgs = v.InferOutput<typeof CreateTodoArgs>;

export const UpdateTodoArgs = v.strictObject({
  id,
  text: v.optional(text),
  done: v.optional(v.boolean()),
});
export type UpdateTodoArgs = v.InferOutput<typeof UpdateTodoArgs>;

export const DeleteTodoArgs = v.strictObject({ id });
export type DeleteTodoArgs = v.InferOutput<typeof DeleteTodoArgs>;
