import { expect, it } from "vitest";
import { call, freshNamespace, NativeClient } from "./http-client.js";
import type { ConformanceTarget } from "./target.js";

/** User "7" as a member, and as an admin (who sees every card). */
export const MEMBER = "7";
export const ADMIN = "7~admin";
/** Card 1 is the member's own; card 2 is another user's, which only an admin sees. */
const OWN_CARD = { id: 1, uid: 7, score: 0, flag: false };
const OTHERS_CARD = { id: 2, uid: 8, score: 0, flag: false };

/** A namespace holding the two cards. */
export async function cardsNamespace(target: ConformanceTarget): Promise<string> {
  const ns = freshNamespace();
  const writer = new NativeClient(target, ns, "8");
  const pushed = await writer.push([
    { name: "putCard", args: OWN_CARD },
    { name: "putCard", args: OTHERS_CARD },
  ]);
  expect(pushed.status).toBe(200);
  return ns;
}

/** Writes a row no card query or filter reads, so that the next pull has a change to read. */
export async function unrelatedWrite(target: ConformanceTarget, ns: string): Promise<void> {
  const writer = new NativeClient(target, ns, "9");
  expect((await writer.push([{ name: "putItem", args: { a: "x", b: 1 } }])).status).toBe(200);
}

/** Pulls as another user now and then: a client group follows the claims of each pull. */
class ClaimsClient extends NativeClient {
  queries: unknown[] | null = null;

  as(user: string): this {
    (this as { user: string }).user = user;
    return this;
  }

  override pull(cookie: number | null = this.cookie) {
    const patch = this.queries;
    this.queries = null;
    return call(this.target, "POST", `/${this.ns}/pull`, {
      user: this.user,
      body: {
        clientGroupID: this.clientGroupID,
        clientID: this.clientID,
        cookie,
        ...(patch === null ? {} : { queries: { patch } }),
      },
    });
  }

  cards(): number[] {
    return [...this.rows]
      .filter(([key]) => key.startsWith("card:"))
      .map(([, row]) => row.id as number)
      .sort();
  }
}

/**
 * A pull under claims other than those the group's rows were answered under ends with exactly
 * what the new claims allow: a demoted user loses the rows only admins see, a promoted one gets
 * them, whether the group is caught up or behind, in every dialect.
 */
export function claimsSuite(target: () => ConformanceTarget): void {
  it.each([
    ["plain pulls", false],
    ["query-aware pulls", true],
  ])("demotes and promotes a group's rows in the native dialect's %s", async (_, byQueries) => {
    const ns = await cardsNamespace(target());
    const client = new ClaimsClient(target(), ns, ADMIN);
    if (byQueries) client.queries = [{ op: "put", hash: "cards", name: "cards", args: {} }];
    await client.sync();
    expect(client.cards()).toEqual([1, 2]);
    // Demoted while caught up: the next pull deletes what only admins see.
    await client.as(MEMBER).sync();
    expect(client.cards()).toEqual([1]);
    // A fresh group of the same user agrees.
    const fresh = new ClaimsClient(target(), ns, MEMBER);
    if (byQueries) fresh.queries = [{ op: "put", hash: "cards", name: "cards", args: {} }];
    await fresh.sync();
    expect(fresh.cards()).toEqual([1]);
    // Promoted after a write the cards do not see: the row comes back.
    await unrelatedWrite(target(), ns);
    await client.as(ADMIN).sync();
    expect(client.cards()).toEqual([1, 2]);
    // Demoted behind the watermark, too.
    await unrelatedWrite(target(), ns);
    await client.as(MEMBER).sync();
    expect(client.cards()).toEqual([1]);
    // Pulls under the same claims as before stay caught up.
    const again = await client.pull();
    expect(again.json).toMatchObject({ unchanged: true });
  });

  it("demotes and promotes a group's rows in the Replicache dialect", async () => {
    const ns = await cardsNamespace(target());
    const keys = new Set<string>();
    let cookie: unknown = null;
    const pull = async (user: string) => {
      const answer = await call(target(), "POST", `/${ns}/replicache/pull`, {
        user,
        body: { pullVersion: 1, schemaVersion: "", profileID: "p", clientGroupID: "rcg", cookie },
      });
      expect(answer.status).toBe(200);
      cookie = answer.json.cookie;
      for (const op of answer.json.patch as Array<{ op: string; key?: string }>) {
        if (op.op === "clear") keys.clear();
        else if (op.op === "put") keys.add(op.key!);
        else keys.delete(op.key!);
      }
      return [...keys].filter((key) => key.startsWith("card/")).sort();
    };
    expect(await pull(ADMIN)).toEqual(["card/1", "card/2"]);
    expect(await pull(MEMBER)).toEqual(["card/1"]);
    await unrelatedWrite(target(), ns);
    expect(await pull(ADMIN)).toEqual(["card/1", "card/2"]);
    await unrelatedWrite(target(), ns);
    expect(await pull(MEMBER)).toEqual(["card/1"]);
  });
}
