import { describe, expect, it } from "vitest";
import { ZeroError } from "./zero-error.js";
import { parseZeroMessage } from "./zero-messages.js";

function refusal(frame: string): string {
  try {
    parseZeroMessage(frame);
  } catch (error) {
    expect(error).toBeInstanceOf(ZeroError);
    expect((error as ZeroError).kind).toBe("InvalidMessage");
    return (error as Error).message;
  }
  throw new Error("parsed");
}

describe("parseZeroMessage", () => {
  it("reads the client's messages, ignoring fields weir has no use for", () => {
    expect(
      parseZeroMessage(
        JSON.stringify([
          "changeDesiredQueries",
          {
            desiredQueriesPatch: [{ op: "put", hash: "h", name: "q", args: [{ a: 1 }], ttl: 5 }],
            traceparent: "t",
          },
        ]),
      ),
    ).toEqual([
      "changeDesiredQueries",
      { desiredQueriesPatch: [{ op: "put", hash: "h", name: "q", args: [{ a: 1 }], ttl: 5 }] },
    ]);
    expect(parseZeroMessage('["ping",{}]')).toEqual(["ping", {}]);
  });

  it("refuses what is not a message, naming why", () => {
    expect(refusal("{")).toMatch(/JSON array/);
    expect(refusal('["ping"]')).toMatch(/JSON array/);
    expect(refusal('["bogus",{}]')).toMatch(/unknown message type "bogus"/);
    expect(refusal('["__proto__",{}]')).toMatch(/unknown message type/);
    expect(refusal('["ackMutationResponses",{"id":0,"clientID":"c"}]')).toMatch(/^ackMutationResponses: /);
    expect(refusal('["changeDesiredQueries",{"desiredQueriesPatch":[{"op":"put"}]}]')).toMatch(/hash/);
  });
});
