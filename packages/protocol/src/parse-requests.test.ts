import { describe, expect, it } from "vitest";
import { MAX_MUTATIONS_PER_PUSH } from "./limits.js";
import { parsePullRequest } from "./parse-pull-request.js";
import { parsePushRequest } from "./parse-push-request.js";
import { UnsupportedVersionError, type WireError } from "./wire-error.js";

const mutation = { type: "custom", id: 1, clientID: "c", name: "m", args: [{ x: 1 }] };

describe("parsePullRequest / parsePushRequest", () => {
  it("bring both dialects to one shape", () => {
    expect(parsePullRequest({ clientGroupID: "g", clientID: "c", cookie: "7" }, "native")).toEqual({
      clientGroupID: "g",
      clientID: "c",
      cookie: 7,
    });
    expect(
      parsePullRequest({ pullVersion: 1, clientGroupID: "g", cookie: null, extra: 1 }, "replicache"),
    ).toEqual({
      clientGroupID: "g",
      cookie: null,
    });
    expect(parsePushRequest({ clientGroupID: "g", pushVersion: 1, mutations: [mutation] }, "native")).toEqual(
      {
        clientGroupID: "g",
        mutations: [{ clientID: "c", id: 1, name: "m", args: { x: 1 }, timestamp: undefined }],
      },
    );
    const replicache = {
      pushVersion: 1,
      clientGroupID: "g",
      mutations: [{ clientID: "c", id: 2, name: "m", args: [3], timestamp: 5 }],
    };
    expect(parsePushRequest(replicache, "replicache").mutations[0]).toEqual({
      clientID: "c",
      id: 2,
      name: "m",
      args: [3],
      timestamp: 5,
    });
  });

  it("refuse with the code a host answers", () => {
    const code = (run: () => unknown) => {
      try {
        run();
        return "accepted";
      } catch (error) {
        return error instanceof UnsupportedVersionError
          ? `${error.code}:${error.versionType}`
          : (error as WireError).code;
      }
    };
    expect(code(() => parsePullRequest({ clientGroupID: "g" }, "native"))).toBe("bad_request");
    expect(
      code(() => parsePullRequest({ pullVersion: 2, clientGroupID: "g", cookie: null }, "replicache")),
    ).toBe("unsupported_version:pull");
    expect(
      code(() => parsePushRequest({ clientGroupID: "g", pushVersion: 3, mutations: [] }, "native")),
    ).toBe("unsupported_version:push");
    const many = Array.from({ length: MAX_MUTATIONS_PER_PUSH + 1 }, () => mutation);
    expect(
      code(() => parsePushRequest({ clientGroupID: "g", pushVersion: 1, mutations: many }, "native")),
    ).toBe("payload_too_large");
  });
});
