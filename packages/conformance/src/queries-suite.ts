import { expect, it } from "vitest";
import { CONFORMANCE_ADMIN_KEY } from "./conformance-config.js";
import { admin, call, freshNamespace, NativeClient } from "./http-client.js";
import type { ConformanceTarget } from "./target.js";

/** A client that pulls by named queries: its patch goes with its next pull. */
class QueryClient extends NativeClient {
  patch: unknown[] = [];

  override pull(cookie: number | null = this.cookie) {
    const patch = this.patch;
    this.patch = [];
    return call(this.target, "POST", `/${this.ns}/pull`, {
      user: this.user,
      body: { clientGroupID: this.clientGroupID, clientID: this.clientID, cookie, queries: { patch } },
    });
  }

  ids(): string[] {
    return [...this.rows.values()].map((row) => row.id as string).sort();
  }
}

/** Query-aware pull: named queries resolved on the server, rows by membership. */
export function queriesSuite(target: () => ConformanceTarget): void {
  it("syncs the rows the group's queries hold, keeps a limit window exact, and lets go of rows", async () => {
    const ns = freshNamespace();
    const client = new QueryClient(target(), ns, "alice");
    await client.push([
      { name: "createTodo", args: { id: "t1", sort: 1 } },
      { name: "createTodo", args: { id: "t2", sort: 2 } },
      { name: "createTodo", args: { id: "t3", sort: 3, done: true } },
    ]);
    client.patch = [{ op: "put", hash: "first2", name: "firstTodos", args: { limit: 2 } }];
    const [first] = await client.sync();
    expect(first!.json.gotQueries).toEqual(["first2"]);
    expect(client.ids()).toEqual(["t1", "t2"]);
    client.patch = [{ op: "put", hash: "done", name: "doneTodos" }];
    await client.sync();
    expect(client.ids()).toEqual(["t1", "t2", "t3"]);
    // t1 leaves the window of the first query: t3, held by both queries now, stays once.
    await client.push([{ name: "deleteTodo", args: { id: "t1" } }]);
    await client.sync();
    expect(client.ids()).toEqual(["t2", "t3"]);
    client.patch = [{ op: "del", hash: "done" }];
    await client.sync();
    expect(client.ids()).toEqual(["t2", "t3"]);
    client.patch = [{ op: "del", hash: "first2" }];
    const [last] = await client.sync();
    expect(last!.json.gotQueries).toEqual([]);
    expect(client.ids()).toEqual([]);
    // Another user's todos are never in alice's queries, done or not.
    const bob = new QueryClient(target(), ns, "bob");
    bob.patch = [{ op: "put", hash: "done", name: "doneTodos" }];
    await bob.sync();
    expect(bob.ids()).toEqual([]);
  });

  it("refuses an unknown name, a raw AST and refused args with 400, and pulls while switched off with 503", async () => {
    const ns = freshNamespace();
    const client = new QueryClient(target(), ns, "alice");
    client.patch = [{ op: "put", hash: "h", name: "nope" }];
    expect(await client.pull()).toMatchObject({ status: 400, json: { message: "unknown query nope" } });
    client.patch = [{ op: "put", hash: "h", name: "doneTodos", ast: { table: "todo" } }];
    expect(await client.pull()).toMatchObject({ status: 400 });
    client.patch = [{ op: "put", hash: "h", name: "firstTodos", args: { limit: "x" } }];
    expect(await client.pull()).toMatchObject({
      status: 400,
      json: { message: "query firstTodos: limit must be an integer" },
    });
    const off = await admin(target(), ns, "queries", CONFORMANCE_ADMIN_KEY, { enabled: false });
    expect(off).toMatchObject({ status: 200, json: { enabled: false } });
    client.patch = [{ op: "put", hash: "h", name: "doneTodos" }];
    expect(await client.pull()).toMatchObject({ status: 503, json: { error: "queries_disabled" } });
    await admin(target(), ns, "queries", CONFORMANCE_ADMIN_KEY, { enabled: true });
    client.patch = [{ op: "put", hash: "h", name: "doneTodos" }];
    expect(await client.pull()).toMatchObject({ status: 200, json: { gotQueries: ["h"] } });
  });
}
