import { describe, expect, it } from "vitest";
import { checkAnswer } from "./answer-schemas.js";

describe("checkAnswer", () => {
  const check = (method: string, path: string, status: number, json: unknown) => () =>
    checkAnswer(method, path, status, json, JSON.stringify(json));

  it("lets through what the protocol allows", () => {
    expect(check("POST", "/ns/pull", 200, { cookie: 3, unchanged: true })).not.toThrow();
    expect(check("POST", "/ns/replicache/push", 200, {})).not.toThrow();
    expect(check("POST", "/ns/push", 400, { error: "bad_request", message: "m" })).not.toThrow();
    expect(check("GET", "/ns/admin/status", 200, { anything: true })).not.toThrow();
  });

  it("fails an answer in another shape", () => {
    expect(check("POST", "/ns/pull", 200, { cookie: "3", unchanged: true })).toThrow(/shape the protocol/);
    expect(
      check("POST", "/ns/pull", 200, { cookie: 3, rowsPatch: [{ op: "nope" }], lastMutationIDChanges: {} }),
    ).toThrow();
    expect(check("POST", "/ns/push", 500, { message: "no code" })).toThrow();
    expect(check("POST", "/ns/replicache/push", 200, { unexpected: 1 })).toThrow();
  });
});
