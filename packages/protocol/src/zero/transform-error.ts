import * as v from "valibot";

/**
 * `["transformError", body]`, down: desired queries the server does not answer, each by its
 * hash (`id`): a put without a name (`parse`), an unknown name, refused args or one past its work
 * budget (`app`). The connection goes on.
 */
export const ZeroTransformErrorBody = v.array(
  v.object({
    error: v.picklist(["app", "parse"]),
    id: v.string(),
    name: v.string(),
    message: v.string(),
  }),
);
export type ZeroTransformErrorBody = v.InferOutput<typeof ZeroTransformErrorBody>;
