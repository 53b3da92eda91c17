import { CONFORMANCE_ADMIN_KEY, conformanceConfig } from "@weir/conformance";
import { ConfigError } from "@weir/host-core";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer } from "./index.js";

const push = (url: string, ns: string, id: number, name = "createTodo", args: unknown = { id: `t${id}` }) =>
  fetch(`${url}/${ns}/push`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "alice" },
    body: JSON.stringify({
      clientGroupID: "g",
      pushVersion: 1,
      mutations: [{ type: "custom", id, clientID: "c", name, args: [args] }],
    }),
  });

const pull = (url: string, ns: string) =>
  fetch(`${url}/${ns}/pull`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "alice" },
    body: JSON.stringify({ clientGroupID: "g", clientID: "c", cookie: null }),
  }).then((response) => response.json() as Promise<{ rowsPatch: unknown[] }>);

describe("createServer", () => {
  it("refuses a config that cannot run, naming every problem", () => {
    const base = { ...conformanceConfig(), devAuth: true, logger: memoryLogger() };
    const attempt = (options: Record<string, unknown>) => () =>
      createServer({ ...base, ...options } as never);
    expect(attempt({ mutators: { async late() {} } })).toThrow(
      /mutators\.late: mutators must be synchronous/,
    );
    expect(attempt({ devAuth: false })).toThrow(/authentication: set jwt/);
    expect(attempt({ jwt: { secret: "s" } })).toThrow(/choose one of jwt, devAuth/);
    const schema = {
      tables: { todo: { columns: { id: "uuid" }, primaryKey: ["nope"] }, _weir_x: base.schema.tables.todo },
    };
    let error: unknown;
    try {
      attempt({ schema, maxChangeRows: 0, storage: "disk" })();
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toMatch(/schema\.tables\.todo\.columns\.id/);
    expect(message).toMatch(/_weir_x/);
    expect(message).toMatch(/maxChangeRows/);
  });

  it("logs one JSON line per request with the namespace hashed, never named", async () => {
    const logger = memoryLogger();
    const server = createServer({ ...conformanceConfig(), devAuth: true, storage: "memory", logger });
    const { url } = await server.listen();
    try {
      const ns = "secret-tenant-name";
      await pull(url, ns);
      await push(url, ns, 1);
      await pull(url, ns);
      await fetch(`${url}/${ns}/nowhere`);
    } finally {
      await server.close();
    }
    expect(
      logger.lines.some((line) => line.level === "warn" && String(line.msg).includes("development")),
    ).toBe(true);
    const requests = logger.lines.filter((line) => line.msg === "request");
    expect(requests.map((line) => line.kind)).toEqual(["pull", "push", "pull", "unknown"]);
    expect(JSON.stringify(logger.lines)).not.toContain("secret-tenant-name");
    const [firstPull, firstPush, secondPull, notFound] = requests as Array<Record<string, unknown>>;
    expect(firstPull!.ns).toMatch(/^[0-9a-f]{16}$/);
    expect(firstPull).toMatchObject({ result: "ok", status: 200, cookieIn: null, reset: true });
    expect(firstPush).toMatchObject({ result: "ok", mutations: 1, idsAdvanced: 1, txMs: expect.any(Number) });
    expect(secondPull).toMatchObject({ puts: 1, dels: 0, idsAdvanced: 1, watermark: expect.any(Number) });
    expect(secondPull).toHaveProperty("floor");
    expect(secondPull).toHaveProperty("cookieOut");
    expect(notFound).toMatchObject({ result: "client_error", status: 404, error: "not_found" });
    for (const line of requests) expect(typeof line.totalMs).toBe("number");
  });

  it("serves Prometheus metrics", async () => {
    const server = createServer({
      ...conformanceConfig(),
      devAuth: true,
      storage: "memory",
      logger: memoryLogger(),
    });
    const { url } = await server.listen();
    try {
      await push(url, "m", 1);
      await fetch(`${url}/m/pull`, { method: "POST" });
      const response = await fetch(`${url}/metrics`);
      expect(response.headers.get("content-type")).toContain("text/plain");
      const text = await response.text();
      expect(text).toMatch(/weir_requests_total\{kind="push",result="ok"\} 1/);
      expect(text).toMatch(/weir_requests_total\{kind="pull",result="client_error"\} 1/);
      expect(text).toMatch(/# TYPE weir_request_duration_seconds histogram/);
      expect(text).toMatch(/weir_request_duration_seconds_bucket\{le="2.5",kind="push"\} 1\n/);
      expect(text).toMatch(/weir_request_duration_seconds_bucket\{le="\+Inf",kind="push"\} 1\n/);
      expect(text).toMatch(/weir_request_duration_seconds_count\{kind="pull"\} 1\n/);
      expect(text).toMatch(/weir_request_duration_seconds_sum\{kind="push"\} 0\.\d+/);
      expect(text).toMatch(/weir_open_namespaces 1/);
      expect(text).toMatch(/weir_wake_sockets 0/);
    } finally {
      await server.close();
    }
  });

  it("tries the app's own routes first", async () => {
    const server = createServer({
      ...conformanceConfig(),
      devAuth: true,
      storage: "memory",
      logger: memoryLogger(),
      onRequest(req, res) {
        if (req.url !== "/") return false;
        res.writeHead(200, { "content-type": "text/html" }).end("<h1>app</h1>");
        return true;
      },
    });
    const { url } = await server.listen();
    try {
      expect(await (await fetch(`${url}/`)).text()).toBe("<h1>app</h1>");
      expect((await fetch(`${url}/todo/pull`, { method: "POST" })).status).toBe(401);
    } finally {
      await server.close();
    }
  });

  it("drops a wake socket whose peer stopped answering pings", async () => {
    const server = createServer({
      ...conformanceConfig(),
      devAuth: true,
      storage: "memory",
      heartbeatMs: 250,
      logger: memoryLogger(),
    });
    const { url } = await server.listen();
    const status = async () =>
      (
        (await (
          await fetch(`${url}/hb/admin/status`, { headers: { "x-admin-key": CONFORMANCE_ADMIN_KEY } })
        ).json()) as { wakeSockets: number }
      ).wakeSockets;
    try {
      const alive = new WebSocket(`${url.replace("http", "ws")}/hb/wake?clientID=alive`, {
        headers: { authorization: "a" },
      });
      const dead = new WebSocket(`${url.replace("http", "ws")}/hb/wake?clientID=dead`, {
        headers: { authorization: "a" },
      });
      await Promise.all([alive, dead].map((ws) => new Promise((resolve) => ws.once("open", resolve))));
      expect(await status()).toBe(2);
      // A peer that vanished: its socket stays open but it no longer reads, so it never pongs.
      (dead as unknown as { _socket: { pause(): void } })._socket.pause();
      for (let i = 0; i < 500 && (await status()) !== 1; i++)
        await new Promise((resolve) => setTimeout(resolve, 10));
      expect(await status()).toBe(1);
      expect(alive.readyState).toBe(WebSocket.OPEN);
      alive.close();
    } finally {
      await server.close();
    }
  });

  it("closes idle namespaces and reopens them with their data", async () => {
    const server = createServer({
      ...conformanceConfig(),
      devAuth: true,
      dataDir: tempDir(),
      logger: memoryLogger(),
    });
    const { url } = await server.listen();
    try {
      await push(url, "idle", 1);
      expect(server.host!.openNamespaces).toBe(1);
      expect(server.host!.closeIdle(0)).toBe(1);
      expect(server.host!.openNamespaces).toBe(0);
      const reopened = await pull(url, "idle");
      expect(reopened.rowsPatch).toContainEqual(expect.objectContaining({ op: "put", tableName: "todo" }));
      expect(server.host!.openNamespaces).toBe(1);
    } finally {
      await server.close();
    }
  });

  it("finishes deferred effects before close resolves, then refuses connections", async () => {
    let release!: () => void;
    const latch = new Promise<void>((resolve) => {
      release = resolve;
    });
    const steps: string[] = [];
    const config = conformanceConfig();
    const server = createServer({
      ...config,
      mutators: {
        ...config.mutators,
        slowEffect(tx) {
          tx.defer(async () => {
            steps.push("effect started");
            await latch;
            steps.push("effect finished");
          });
        },
      },
      devAuth: true,
      storage: "memory",
      logger: memoryLogger(),
    });
    const { url } = await server.listen();
    expect((await push(url, "close", 1, "slowEffect", {})).status).toBe(200);
    const closed = server.close().then(() => steps.push("closed"));
    await Promise.resolve();
    steps.push("releasing");
    release();
    await closed;
    expect(steps).toEqual(["effect started", "releasing", "effect finished", "closed"]);
    await expect(fetch(`${url}/close/pull`, { method: "POST" })).rejects.toThrow();
  });
});
