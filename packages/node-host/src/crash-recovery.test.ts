import { expect, it } from "vitest";
import { startChildServer } from "../test/child-server.js";
import { tempDir } from "../test/helpers.js";
import { LedgerClient } from "../test/ledger-client.js";

const CLIENTS = 4;
/** Acknowledged mutations before the kill: enough that pushes are streaming when it lands. */
const ACKS_BEFORE_KILL = 80;
const MORE_AFTER_RESTART = 5;

it("keeps every acknowledged mutation exactly once across a SIGKILL, and clients catch up", async () => {
  const dataDir = tempDir();
  let server = await startChildServer(dataDir);
  const clients = Array.from({ length: CLIENTS }, (_, i) => new LedgerClient(`client-${i}`));
  for (const client of clients) await client.sync(server.url);

  let acks = 0;
  let reached!: () => void;
  const enough = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const streams = clients.map(async (client) => {
    for (;;) {
      try {
        expect(await client.push(server.url)).toEqual({});
      } catch {
        return; // The kill cut this push: it may or may not have committed.
      }
      if (++acks >= ACKS_BEFORE_KILL) reached();
    }
  });
  await enough;
  server.child.kill("SIGKILL");
  expect((await server.exited).signal).toBe("SIGKILL");
  await Promise.all(streams);
  const acknowledged = clients.map((client) => client.acked);

  server = await startChildServer(dataDir);
  for (const client of clients) {
    // A real client pushes its unacknowledged mutation again: committed before the kill or not,
    // it runs once.
    const retried = await client.push(server.url, client.acked + 1);
    expect([{}, "alreadyProcessed"]).toContainEqual(retried.error ?? {});
    for (let i = 0; i < MORE_AFTER_RESTART; i++) expect(await client.push(server.url)).toEqual({});
  }

  let entries = 0;
  for (const [index, client] of clients.entries()) {
    await client.sync(server.url);
    expect(client.lastMutationID).toBe(client.acked);
    expect(client.acked).toBeGreaterThanOrEqual(acknowledged[index]! + MORE_AFTER_RESTART);
    const own = [...client.rows.values()].filter((row) => row.client === client.clientID);
    expect(own.map((row) => row.n).sort((a, b) => Number(a) - Number(b))).toEqual(
      Array.from({ length: client.acked }, (_, i) => i + 1),
    );
    entries += own.length;
  }
  const everyone = clients[0]!;
  expect(everyone.rows.get("total/all")).toEqual({ id: "all", count: entries });

  server.child.kill("SIGTERM");
  expect((await server.exited).code).toBe(0);
});
