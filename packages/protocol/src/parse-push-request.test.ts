import * as v from "valibot";
import { describe, expect, it } from "vitest";
import { MAX_ID_LENGTH, MAX_MUTATOR_NAME_LENGTH } from "./limits.js";
import { parsePushRequest } from "./parse-push-request.js";
import { PushRequest } from "./push-request.js";
import { ReplicachePushRequest } from "./replicache-push-request.js";

/** What the schemas alone answer: the batch, or that the body is refused. */
function bySchema(body: unknown, dialect: "native" | "replicache") {
  const result = v.safeParse(dialect === "replicache" ? ReplicachePushRequest : PushRequest, body);
  if (!result.success) return "refused";
  if (result.output.pushVersion !== 1) return "unsupported";
  return {
    clientGroupID: result.output.clientGroupID,
    mutations: result.output.mutations.map(({ clientID, id, name, args, timestamp }) => ({
      clientID,
      id,
      name,
      args: dialect === "replicache" ? args : (args as unknown[])[0],
      timestamp,
    })),
  };
}

function byParse(body: unknown, dialect: "native" | "replicache") {
  try {
    return parsePushRequest(body, dialect);
  } catch (error) {
    return (error as { code?: string }).code === "bad_request" ? "refused" : "unsupported";
  }
}

const long = (n: number) => "x".repeat(n);
/** A field of a mutation or of the body set to each value that is near a bound or of another type. */
const VALUES: unknown[] = [
  undefined,
  null,
  0,
  1,
  -1,
  1.5,
  2 ** 53,
  "",
  "a",
  long(MAX_MUTATOR_NAME_LENGTH),
  long(MAX_MUTATOR_NAME_LENGTH + 1),
  long(MAX_ID_LENGTH),
  long(MAX_ID_LENGTH + 1),
  true,
  [],
  [1],
  {},
  "custom",
];

describe("parsePushRequest", () => {
  it("answers as the schemas do, field by field, in both dialects", () => {
    const native = {
      clientGroupID: "g",
      pushVersion: 1,
      mutations: [{ type: "custom", id: 1, clientID: "c", name: "m", args: [{ x: 1 }], timestamp: 5 }],
    };
    const replicache = {
      pushVersion: 1,
      clientGroupID: "g",
      profileID: "p",
      schemaVersion: "",
      mutations: [{ id: 1, clientID: "c", name: "m", args: { x: 1 }, timestamp: 5 }],
    };
    let compared = 0;
    for (const [dialect, base] of [
      ["native", native],
      ["replicache", replicache],
    ] as const) {
      const bodyKeys = [...Object.keys(base), "extra"];
      const mutationKeys = [...Object.keys(base.mutations[0]!), "extra"];
      for (const value of VALUES) {
        for (const key of bodyKeys) {
          const body: Record<string, unknown> = { ...base, [key]: value };
          if (value === undefined) delete body[key];
          expect(byParse(body, dialect), `${dialect} ${key}=${String(value)}`).toEqual(
            bySchema(body, dialect),
          );
          compared++;
        }
        for (const key of mutationKeys) {
          const mutation: Record<string, unknown> = { ...base.mutations[0], [key]: value };
          if (value === undefined) delete mutation[key];
          const body = { ...base, mutations: [base.mutations[0], mutation] };
          expect(byParse(body, dialect), `${dialect} mutation ${key}=${String(value)}`).toEqual(
            bySchema(body, dialect),
          );
          compared++;
        }
      }
      for (const body of [null, [], "x", 1, { ...base, mutations: [null] }, { ...base, mutations: [[]] }]) {
        expect(byParse(body, dialect)).toEqual(bySchema(body, dialect));
      }
    }
    expect(compared).toBeGreaterThan(300);
  });
});
