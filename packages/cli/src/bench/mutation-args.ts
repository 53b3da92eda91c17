import { InvalidArgumentError } from "commander";

/** The push mutator's arguments unless `--args` says otherwise: a row `{ id, value }`. */
export const DEFAULT_ARGS_TEMPLATE = '{"id":"$id","value":"$n"}';

/**
 * The arguments of each mutation a push mode sends, from a JSON template: every string that is
 * exactly `"$id"` becomes the mutation's unique row id, every `"$n"` its number, so that one
 * load generator can drive any app's one-row mutator (`{"id":"$id","text":"t","done":false,"sort":"$n"}`).
 */
export type MutationArgs = (id: string, n: number) => unknown;

export function mutationArgsArg(text: string): MutationArgs {
  let template: unknown;
  try {
    template = JSON.parse(text);
  } catch {
    throw new InvalidArgumentError('expected a JSON template such as {"id":"$id","value":"$n"}');
  }
  return (id, n) => fill(template, id, n);
}

function fill(value: unknown, id: string, n: number): unknown {
  if (value === "$id") return id;
  if (value === "$n") return n;
  if (Array.isArray(value)) return value.map((item) => fill(item, id, n));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, fill(item, id, n)]));
  }
  return value;
}
