import { expect, it } from "vitest";
import { ADMIN, cardsNamespace, MEMBER, unrelatedWrite } from "./claims-suite.js";
import type { ConformanceTarget } from "./target.js";
import { connectZero, pokePartsOf, until, type ZeroTestSocket } from "./zero-socket-client.js";

type RowOp = { op: string; tableName?: string; value?: { id: number }; id?: { id: number } };

/** The card ids a Zero client holds after applying its sockets' pokes in order. */
class ZeroCards {
  readonly ids = new Set<number>();
  private applied = new Map<ZeroTestSocket, number>();

  apply(socket: ZeroTestSocket): number[] {
    const parts = pokePartsOf(socket);
    for (const part of parts.slice(this.applied.get(socket) ?? 0)) {
      for (const op of (part.rowsPatch as RowOp[] | undefined) ?? []) {
        if (op.op === "clear") this.ids.clear();
        else if (op.tableName !== "card") continue;
        else if (op.op === "put") this.ids.add(op.value!.id);
        else if (op.op === "del") this.ids.delete(op.id!.id);
      }
    }
    this.applied.set(socket, parts.length);
    return [...this.ids].sort();
  }
}

function pokeEnds(socket: ZeroTestSocket): Array<{ cookie: string }> {
  return socket.messages.filter((m) => m[0] === "pokeEnd").map((m) => m[1] as { cookie: string });
}

/** Claims changes in the Zero dialect: `updateAuth` and a reconnect with another credential. */
export function zeroClaimsSuite(current: () => ConformanceTarget): void {
  it("takes a demotion by updateAuth and a promotion by reconnect into the rows a group holds", async () => {
    const ns = await cardsNamespace(current());
    const group = `gclaims${Math.random().toString(36).slice(2)}`;
    const client = new ZeroCards();
    const admin = await connectZero(current().url, ns, { group, user: ADMIN });
    await admin.next("pokeEnd");
    admin.ws.send(
      JSON.stringify([
        "changeDesiredQueries",
        { desiredQueriesPatch: [{ op: "put", hash: "cards", name: "cards", args: [] }] },
      ]),
    );
    await until(() => pokeEnds(admin).length >= 2);
    expect(client.apply(admin)).toEqual([1, 2]);
    // Demoted on the open socket: the card only admins see is deleted at once.
    const before = pokeEnds(admin).length;
    admin.ws.send(JSON.stringify(["updateAuth", { auth: MEMBER }]));
    await until(() => pokeEnds(admin).length > before);
    expect(client.apply(admin)).toEqual([1]);
    const cookie = pokeEnds(admin).at(-1)!.cookie;
    admin.ws.close();
    await admin.closed;
    // Promoted on reconnect with the client's last cookie, after a write the cards do not see.
    await unrelatedWrite(current(), ns);
    const promoted = await connectZero(current().url, ns, { group, user: ADMIN, cookie });
    await promoted.next("pokeEnd");
    expect(client.apply(promoted)).toEqual([1, 2]);
    // A new credential of the same claims changes nothing.
    const settled = pokeEnds(promoted).length;
    promoted.ws.send(JSON.stringify(["updateAuth", { auth: ADMIN }]));
    promoted.ws.send(JSON.stringify(["ping", {}]));
    await promoted.next("pong");
    expect(client.apply(promoted)).toEqual([1, 2]);
    expect(pokeEnds(promoted).length).toBe(settled);
    promoted.ws.close();
  });
}
