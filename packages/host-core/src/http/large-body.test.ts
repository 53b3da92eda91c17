import { afterEach, describe, expect, it } from "vitest";
import { headerUser, send, testHost } from "../../test/test-host.js";
import type { WeirConfig } from "../config/weir-config.js";
import type { WeirHost } from "../host/weir-host.js";
import type { ResponseParts } from "./http-parts.js";

const config: WeirConfig = {
  schema: { tables: { item: { columns: { id: "string" }, primaryKey: ["id"] } } },
  mutators: {
    add(tx, args) {
      tx.upsert("item", { id: (args as { id: string }).id });
    },
  },
  authenticate: headerUser,
  queries: {
    byIds: (args) => ({
      table: "item",
      where: {
        type: "simple",
        op: "IN",
        left: { type: "column", name: "id" },
        right: { type: "literal", value: args },
      },
    }),
  },
};

const hosts: WeirHost[] = [];
afterEach(async () => {
  for (const host of hosts.splice(0)) await host.close();
});

/** A request as a host hands it over, its body read already (as the Node host's workers get it). */
function handled(host: WeirHost, path: string, user: string, body: unknown): Promise<ResponseParts> {
  return host.handleParts({
    method: "POST",
    url: `http://weir.test${path}`,
    headers: new Headers({ "content-type": "application/json", authorization: user }),
    body: new TextEncoder().encode(JSON.stringify(body)),
    request: () => {
      throw new Error("not needed");
    },
  });
}

describe("a large request body, over HTTP", () => {
  it("is parsed in slices: another namespace's pull is answered before its refusal", async () => {
    const host = await testHost(config);
    hosts.push(host);
    for (const ns of ["big", "other"]) {
      const pushed = await send(host, "POST", `/${ns}/push`, {
        user: "victor",
        body: {
          clientGroupID: "w",
          pushVersion: 1,
          mutations: [{ type: "custom", clientID: "w-c", id: 1, name: "add", args: [{ id: "a" }] }],
        },
      });
      expect(pushed.status).toBe(200);
    }
    // 100 queries of 1,000 ids each: about 1.2 MB of arguments, past the 1 MiB a group may hold.
    const patch = Array.from({ length: 100 }, (_, q) => ({
      op: "put",
      hash: `q${q}`,
      name: "byIds",
      args: Array.from({ length: 1000 }, (_, i) => `id-${q}-${i}`),
    }));
    const order: string[] = [];
    const big = handled(host, "/big/pull", "mallory", {
      clientGroupID: "a",
      clientID: "a-c",
      cookie: null,
      queries: { patch },
    }).then((answer) => {
      order.push("big");
      return answer;
    });
    const other = handled(host, "/other/pull", "victor", {
      clientGroupID: "v",
      clientID: "v-c",
      cookie: null,
    }).then((answer) => {
      order.push("other");
      return answer;
    });
    const [bigAnswer, otherAnswer] = await Promise.all([big, other]);
    expect(order).toEqual(["other", "big"]);
    expect(otherAnswer.status).toBe(200);
    expect(JSON.parse(otherAnswer.body!).rowsPatch).toContainEqual({
      op: "put",
      tableName: "item",
      value: { id: "a" },
    });
    expect(bigAnswer.status).toBe(422);
    expect(JSON.parse(bigAnswer.body!)).toMatchObject({
      error: "query_budget_exceeded",
      message: expect.stringContaining("maxGroupQueryBytes"),
    });
  });
});
