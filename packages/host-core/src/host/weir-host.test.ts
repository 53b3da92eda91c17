import { describe, expect, it } from "vitest";
import { testHost } from "../../test/test-host.js";
import type { Claims } from "../auth/claims.js";
import type { WeirConfig } from "../config/weir-config.js";

/** A host over one real SQLite database, authenticating with `authenticate`. */
async function setup(authenticate: WeirConfig["authenticate"]) {
  const host = await testHost({
    schema: { tables: { note: { columns: { id: "string" }, primaryKey: ["id"] } } },
    mutators: {},
    authenticate,
  });
  const pull = (user = "alice") =>
    host.handle(
      new Request("http://weir.test/ns/pull", {
        method: "POST",
        headers: { authorization: user, "content-type": "application/json" },
        body: JSON.stringify({ clientGroupID: `g-${user}`, clientID: "c", cookie: null }),
      }),
    );
  return { host, pull };
}

describe("WeirHost", () => {
  it("takes claims from an authenticate that answers at once or later, and 401 when it fails", async () => {
    const answers: Record<string, () => Claims | null | Promise<Claims | null>> = {
      sync: () => ({ userID: "sync" }),
      async: async () => ({ userID: "async" }),
      none: () => null,
      later: async () => null,
      throws: () => {
        throw new Error("no");
      },
      rejects: async () => {
        throw new Error("no");
      },
    };
    const { host, pull } = await setup((request) => answers[request.headers.get("authorization")!]!());
    const statuses = Object.fromEntries(
      await Promise.all(Object.keys(answers).map(async (user) => [user, (await pull(user)).status])),
    );
    expect(statuses).toEqual({ sync: 200, async: 200, none: 401, later: 401, throws: 401, rejects: 401 });
    await host.close();
  });

  it("closes only once the requests in flight have their answers, refusing new ones meanwhile", async () => {
    let letThrough: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      letThrough = resolve;
    });
    const { host, pull } = await setup(async (request) => {
      const user = request.headers.get("authorization")!;
      if (user === "slow") await held;
      return { userID: user };
    });
    expect((await pull("alice")).status).toBe(200);
    const inFlight = pull("slow");
    let closed = false;
    const closing = host.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false);
    expect((await pull("alice")).status).toBe(503);
    letThrough();
    expect((await inFlight).status).toBe(200);
    await closing;
    expect(closed).toBe(true);
  });
});
