import { expect, it } from "vitest";
import { CONFORMANCE_MAX_CHANGE_ROWS as CAP, CONFORMANCE_ADMIN_KEY } from "./conformance-config.js";
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

  it("cuts a query-aware answer at maxChangeRows, reports ids in its last part, and resumes a client that lost a part", async () => {
    const ns = freshNamespace();
    const client = new QueryClient(target(), ns, "alice");
    const count = CAP * 2 + 7;
    const todos = Array.from({ length: count }, (_, i) => ({
      name: "createTodo",
      args: { id: `t${i}`, sort: i },
    }));
    await client.push(todos);
    client.patch = [{ op: "put", hash: "all", name: "firstTodos", args: { limit: count } }];
    const pages = await client.sync();
    const parts = pages.slice(0, -1).map((page) => page.json);
    expect(
      parts.map((part) => part.rowsPatch.filter((op: { op: string }) => op.op === "put").length),
    ).toEqual([CAP, CAP, 7]);
    // Each part has a new cookie; only the last names the query and the pushed mutations.
    expect(new Set(parts.map((part) => part.cookie)).size).toBe(3);
    expect(parts.map((part) => part.gotQueries)).toEqual([[], [], ["all"]]);
    expect(parts.map((part) => part.lastMutationIDChanges[client.clientID])).toEqual([
      undefined,
      undefined,
      count,
    ]);
    expect(client.ids()).toHaveLength(count);
    // A second group: its second part is lost, and it pulls again from the cookie before it. It
    // resumes there (no clear): the rest of the rows come once each, the lost part's again.
    const other = new QueryClient(target(), ns, "alice");
    other.patch = [{ op: "put", hash: "all", name: "firstTodos", args: { limit: count } }];
    const first = await other.pull();
    other.apply(first.json);
    const lost = await other.pull();
    expect(lost.json.rowsPatch).toHaveLength(CAP);
    const again = await other.pull();
    const puts = (patch: Array<{ op: string }> = []) => patch.filter((op) => op.op === "put").length;
    expect(again.json.rowsPatch.some((op: { op: string }) => op.op === "clear")).toBe(false);
    other.apply(again.json);
    const rest = await other.sync();
    const resent =
      puts(again.json.rowsPatch) + rest.reduce((sum, page) => sum + puts(page.json.rowsPatch), 0);
    expect(resent).toBe(count - CAP);
    expect(other.ids()).toEqual(client.ids());
  });
}
