import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createServer, type WeirServer } from "@weir/node-host";
import { startPostgres, type TestPostgres } from "@weir/postgres-testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresUpstream, postgresUpstream } from "../src/index.js";

// Delegated push end to end: a weir Node server whose namespaces replicate PostgreSQL through an
// in-process postgresUpstream and forward pushes to an app server (createPushProcessor) running
// in a child process. Pulls are capped at one row, so a version's rows and acknowledgements
// that came in separate versions arrive in separate pulls.

let db: TestPostgres;
let dir: string;
let upstream: PostgresUpstream;
let weir: WeirServer;
let weirUrl: string;
let appPort = 0;
let app: { child: ChildProcess; exited: Promise<NodeJS.Signals | number | null> } | null = null;

async function startApp(env: Record<string, string> = {}): Promise<void> {
  const file = fileURLToPath(new URL("./fixtures/app-server.mjs", import.meta.url));
  const child = spawn(process.execPath, [file], {
    env: { ...process.env, ...env, DATABASE_URL: db.url, PORT: String(appPort) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on("exit", (code, signal) => resolve(signal ?? code)),
  );
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.once("data", (chunk: Buffer) => resolve(JSON.parse(chunk.toString()).url));
    exited.then((why) => reject(new Error(`the app server exited (${why})`)));
  });
  appPort = Number(new URL(url).port);
  app = { child, exited };
}

async function stopApp(): Promise<void> {
  if (!app) return;
  if (app.child.exitCode === null && app.child.signalCode === null) app.child.kill("SIGTERM");
  await app.exited;
  app = null;
}

beforeAll(async () => {
  db = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "weir-delegated-push-"));
  mkdirSync(join(dir, "data"));
  // `row_no` is the key, so a mutation applied twice would leave two rows with its id.
  await db.sql(`CREATE TABLE todo (ns text NOT NULL, row_no bigserial, id text NOT NULL, owner text NOT NULL, PRIMARY KEY (ns, row_no));
    ALTER TABLE todo REPLICA IDENTITY FULL;`);
  await startApp();
  upstream = await postgresUpstream({
    databaseUrl: db.url,
    tables: ["todo"],
    tenant: { column: "ns" },
    bufferFile: join(dir, "buffer.sqlite"),
    onCommit: (namespaces) => weir.host?.upstreamCommitted(namespaces),
  });
  weir = createServer({
    schema: upstream.schema,
    mutators: {},
    upstream: { source: (namespace) => upstream.source(namespace) },
    mutate: { url: `http://127.0.0.1:${appPort}/mutate`, timeoutMs: 5_000, attempts: 2 },
    maxChangeRows: 1,
    devAuth: true,
    dataDir: join(dir, "data"),
    logger: { log() {} },
  });
  weirUrl = (await weir.listen()).url;
});

afterAll(async () => {
  await weir?.close();
  await stopApp();
  await upstream?.dropReplication();
  await db?.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface PullAnswer {
  cookie: number;
  unchanged?: boolean;
  lastMutationIDChanges?: Record<string, number>;
  rowsPatch?: Array<{ op: string; tableName?: string; value?: Record<string, unknown> }>;
}

/** A native client that keeps the todo ids it has seen, in pulls capped at one row. */
class Client {
  cookie: number | null = null;
  lastMutationID = 0;
  readonly seen = new Set<string>();
  readonly clientGroupID = `g-${Math.random().toString(36).slice(2, 10)}`;
  readonly clientID = `c-${Math.random().toString(36).slice(2, 10)}`;

  constructor(
    readonly namespace: string,
    readonly user: string,
  ) {}

  async post(route: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
    const response = await fetch(`${weirUrl}/${this.namespace}/${route}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: this.user },
      body: JSON.stringify(body),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }

  /** One pull; answers the acknowledgements it moved to, checking each against the rows seen. */
  async pull(): Promise<PullAnswer> {
    const { status, json } = await this.post("pull", {
      clientGroupID: this.clientGroupID,
      clientID: this.clientID,
      cookie: this.cookie,
    });
    expect(status).toBe(200);
    const answer = json as unknown as PullAnswer;
    this.cookie = answer.cookie;
    for (const op of answer.rowsPatch ?? []) {
      if (op.op === "clear") this.seen.clear();
      if (op.op === "put" && op.tableName === "todo") this.seen.add(op.value!.id as string);
    }
    const last = answer.lastMutationIDChanges?.[this.clientID];
    if (last !== undefined) {
      // Acknowledged in this pull: the rows of every mutation up to it are in this pull or before.
      for (let id = this.lastMutationID + 1; id <= last; id++) expect(this.seen).toContain(this.todo(id));
      this.lastMutationID = last;
    }
    return answer;
  }

  async sync(): Promise<void> {
    for (let i = 0; i < 10_000; i++) if ((await this.pull()).unchanged) return;
    throw new Error("the pulls never caught up");
  }

  todo(id: number): string {
    return `${this.clientID}-${id}`;
  }

  push(ids: number[]) {
    return this.post("push", {
      clientGroupID: this.clientGroupID,
      pushVersion: 1,
      mutations: ids.map((id) => ({
        type: "custom",
        id,
        clientID: this.clientID,
        name: "createTodo",
        args: [{ id: this.todo(id) }],
        timestamp: 1,
      })),
    });
  }
}

async function appRecord(client: Client): Promise<number | null> {
  const { rows } = await db.sql(
    "SELECT last_mutation_id FROM weir_app_clients WHERE client_group_id = $1 AND client_id = $2",
    [client.clientGroupID, client.clientID],
  );
  return rows.length === 0 ? null : Number(rows[0].last_mutation_id);
}

async function copies(id: string): Promise<number> {
  return Number((await db.sql("SELECT count(*) AS n FROM todo WHERE id = $1", [id])).rows[0].n);
}

describe("delegated push against PostgreSQL", () => {
  it("the app killed after its commit and before its answer: a retryable error, and the push sent again applies nothing twice", async () => {
    const client = new Client("killed", "alice");
    await client.sync();
    expect((await client.push([1])).status).toBe(200);
    await client.sync();
    expect(client.lastMutationID).toBe(1);

    await stopApp();
    await startApp({ KILL_AFTER_COMMIT: client.todo(2) });
    const died = app!.exited;
    const refused = await client.push([2, 3]);
    expect(await died).toBe("SIGKILL");
    expect(refused.status).toBe(503);
    expect(refused.json.error).toBe("app_unavailable");
    // The app committed mutation 2 (and died before 3); weir acknowledged neither.
    expect(await appRecord(client)).toBe(2);
    expect(await copies(client.todo(2))).toBe(1);
    expect(await copies(client.todo(3))).toBe(0);
    await client.sync();
    expect(client.lastMutationID).toBe(1);

    await startApp();
    const again = await client.push([2, 3]);
    expect(again.status).toBe(200);
    expect(again.json).toEqual({
      pushResponse: {
        mutations: [
          { id: { clientID: client.clientID, id: 2 }, result: {} },
          { id: { clientID: client.clientID, id: 3 }, result: {} },
        ],
      },
    });
    expect(await appRecord(client)).toBe(3);
    expect(await copies(client.todo(2))).toBe(1);
    expect(await copies(client.todo(3))).toBe(1);
    await client.sync();
    expect(client.lastMutationID).toBe(3);
    expect([...client.seen].sort()).toEqual([client.todo(1), client.todo(2), client.todo(3)]);
  });

  it("never acknowledges a mutation in a pull before its row is in that pull or an earlier one", async () => {
    const clients = [
      new Client("capped", "alice"),
      new Client("capped", "bob"),
      new Client("capped", "carol"),
    ];
    await clients[0]!.sync();
    await Promise.all(
      clients.map(async (client) => {
        let pushing = true;
        const pulls = (async () => {
          // Pulls race the pushes; every acknowledgement is checked as it arrives.
          while (pushing) await client.pull();
        })();
        for (let round = 0; round < 4; round++) {
          const first = round * 3 + 1;
          const answer = await client.push([first, first + 1, first + 2]);
          expect(answer.status).toBe(200);
        }
        pushing = false;
        await pulls;
        await client.sync();
        expect(client.lastMutationID).toBe(12);
        expect(client.seen.size).toBeGreaterThanOrEqual(12);
        for (let id = 1; id <= 12; id++) expect(await copies(client.todo(id))).toBe(1);
      }),
    );
  });
});
