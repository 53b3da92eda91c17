import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresUpstream } from "../src/index.js";
import { waitFor } from "./namespace-model.js";

// Closing the upstream while its replication connection is being made again (after a lost
// connection, or after a column was added): close ends, and no connection streams on after it.

let db: TestPostgres;
let dir: string;

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-close-connecting-"));
  await db.sql(`CREATE TABLE note (id int PRIMARY KEY, body text);
    ALTER TABLE note REPLICA IDENTITY FULL;`);
});

afterAll(async () => {
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A TCP relay to PostgreSQL that, while `hold` is on, keeps each new connection waiting (what
 * the client sends is kept) until `release`.
 */
function relay(port: number) {
  const held: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  let hold = false;
  const server = net.createServer((client) => {
    sockets.add(client);
    const connect = () => {
      const upstream = net.connect(port, "127.0.0.1");
      sockets.add(upstream);
      client.pipe(upstream).on("error", () => {});
      upstream.pipe(client).on("error", () => {});
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on("close", end).on("error", end);
      upstream.on("close", end).on("error", end);
      client.resume();
    };
    if (!hold) return connect();
    client.pause();
    held.push(connect);
  });
  return {
    listening: new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)),
    ),
    holdNew(on: boolean) {
      hold = on;
    },
    get held() {
      return held.length;
    },
    release() {
      for (const connect of held.splice(0)) connect();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

async function walSenders(): Promise<number> {
  const { rows } = await db.sql("SELECT count(*)::int AS n FROM pg_stat_replication");
  return rows[0].n as number;
}

describe("closing the upstream", () => {
  it("while its replication connection is being made again ends, and leaves no connection streaming", async () => {
    const proxy = relay(db.port);
    const url = new URL(db.url);
    url.hostname = "127.0.0.1";
    url.port = String(await proxy.listening);
    const upstream = await postgresUpstream({
      databaseUrl: url.toString(),
      tables: ["note"],
      bufferFile: join(dir, "buffer.sqlite"),
      random: () => 0,
      thread: false,
      logger: { log() {} },
    });
    try {
      expect(await walSenders()).toBe(1);
      // The replication connection is lost; its next one waits in the relay.
      proxy.holdNew(true);
      await db.sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'walsender'");
      await waitFor(async () => proxy.held > 0, 20_000, "a new replication connection");
      const closed = upstream.close();
      // The connection goes through once close was asked for.
      await new Promise((resolve) => setTimeout(resolve, 100));
      proxy.holdNew(false);
      proxy.release();
      const outcome = await Promise.race([
        closed.then(() => "closed"),
        new Promise((resolve) => setTimeout(() => resolve("still closing after 15 s"), 15_000)),
      ]);
      expect(outcome).toBe("closed");
      await waitFor(async () => (await walSenders()) === 0, 10_000, "no replication connection");
    } finally {
      proxy.close();
    }
  }, 60_000);
});
