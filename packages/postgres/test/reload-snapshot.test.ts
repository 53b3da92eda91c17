import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { postgresUpstream } from "../src/index.js";
import { waitFor } from "./namespace-model.js";

// A column added upstream: the reader reads the tables again and raises the buffer's floor, so
// every namespace takes a fresh snapshot. A snapshot taken at any moment after the floor rose
// has the new column, even while the reload is still talking to PostgreSQL.

let db: TestPostgres;
let dir: string;

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-reload-snapshot-"));
  await db.sql(`CREATE TABLE item (id int PRIMARY KEY, org text NOT NULL, title text);
    ALTER TABLE item REPLICA IDENTITY FULL;
    INSERT INTO item SELECT i, 'a', 'title ' || i FROM generate_series(1, 5) i;`);
});

afterAll(async () => {
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A TCP relay to PostgreSQL that, once armed, holds what a client sends from the first chunk
 * holding `text` on (on that connection only) until `release`.
 */
function relay(port: number, text: string) {
  const sockets = new Set<net.Socket>();
  const held: (() => void)[] = [];
  let armed = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(port, "127.0.0.1");
    sockets.add(client).add(upstream);
    let waiting: Buffer[] | null = null;
    client.on("data", (chunk: Buffer) => {
      if (waiting) return void waiting.push(chunk);
      if (armed && chunk.includes(text)) {
        waiting = [chunk];
        held.push(() => {
          for (const part of waiting!) upstream.write(part);
          waiting = null;
        });
        return;
      }
      upstream.write(chunk);
    });
    upstream.pipe(client).on("error", () => {});
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  return {
    listening: new Promise<number>((resolve) =>
      server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)),
    ),
    arm() {
      armed = true;
    },
    get held() {
      return held.length;
    },
    release() {
      armed = false;
      for (const send of held.splice(0)) send();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

describe("a column added upstream", () => {
  it("is in every snapshot taken after the floor rose, while the reload still runs", async () => {
    const proxy = relay(db.port, "SELECT txid_current()");
    const url = new URL(db.url);
    url.hostname = "127.0.0.1";
    url.port = String(await proxy.listening);
    const upstream = await postgresUpstream({
      databaseUrl: url.toString(),
      tables: ["item"],
      tenant: { column: "org" },
      bufferFile: join(dir, "buffer.sqlite"),
      logger: { log() {} },
    });
    try {
      // The reload raises the floor, then marks it with an empty transaction: that query waits.
      proxy.arm();
      await db.sql("ALTER TABLE item ADD COLUMN extra text DEFAULT 'dflt'");
      await db.sql("INSERT INTO item (id, org, title) VALUES (6, 'a', 'after')");
      await waitFor(async () => proxy.held > 0, 20_000, "the reload's empty transaction");
      expect((await upstream.status()).buffer.resetReason).toContain("item.extra was added");
      const page = await upstream.source("a").snapshotPage("item", null, 100);
      expect(page.rows).toHaveLength(6);
      // Rows from before the column have its default, as PostgreSQL holds them.
      for (const row of page.rows) expect(row).toHaveProperty("extra", "dflt");
      proxy.release();
      await waitFor(async () => (await upstream.status()).state === "streaming", 20_000, "streaming again");
    } finally {
      proxy.release();
      await upstream.close();
      proxy.close();
    }
  }, 60_000);
});
