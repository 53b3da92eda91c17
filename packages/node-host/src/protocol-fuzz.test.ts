import { conformanceConfig } from "@weir/conformance";
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { memoryLogger } from "../test/helpers.js";
import { createServer, type WeirServer } from "./index.js";

const ADMIN_KEY = "fuzz-admin-key";
const NS = "fuzz";
const RUNS = 150;
let server: WeirServer;
let url: string;

beforeAll(async () => {
  server = createServer({
    ...conformanceConfig(),
    adminKey: ADMIN_KEY,
    devAuth: true,
    storage: "memory",
    logger: memoryLogger(),
  });
  ({ url } = await server.listen());
  // Some state to protect: one todo and one client.
  await send("push", {
    clientGroupID: "g",
    pushVersion: 1,
    mutations: [{ type: "custom", id: 1, clientID: "c", name: "createTodo", args: [{ id: "t1" }] }],
  });
});

afterAll(() => server.close());

async function send(route: string, body: unknown, raw?: string, path = `/${NS}/${route}`) {
  const response = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "alice" },
    body: raw ?? JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, text };
}

async function state(): Promise<unknown> {
  const response = await fetch(`${url}/${NS}/admin/status`, { headers: { "x-admin-key": ADMIN_KEY } });
  const { engine, counters } = (await response.json()) as { engine: unknown; counters: { pushes: number } };
  return { engine, pushes: counters.pushes };
}

function expectClientError({ status, text }: { status: number; text: string }): void {
  expect(status, text).toBeGreaterThanOrEqual(400);
  expect(status, text).toBeLessThan(500);
  const body = JSON.parse(text) as { error: unknown; message: unknown };
  expect(typeof body.error).toBe("string");
  expect(typeof body.message).toBe("string");
}

const notAString = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer()),
  fc.object(),
);
// NaN and ±Infinity are left out: JSON.stringify sends them as null, which is a valid cookie.
const badId = fc.oneof(
  fc.integer({ max: 0 }),
  fc.double({ noInteger: true, noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(2 ** 53, 2 ** 60, Number.MAX_VALUE, -0.5, 1e308),
  fc.string(),
  fc.boolean(),
  fc.constant(null),
);
const badCookie = fc.oneof(
  fc.integer({ max: -1 }),
  fc.double({ noInteger: true, noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(2 ** 60, "01", "1e3", "-1", " 1", "x"),
  fc.boolean(),
  fc.object(),
);
const unknownKey = fc
  .string({ minLength: 1 })
  .filter(
    (k) =>
      !["clientGroupID", "clientID", "cookie", "pushVersion", "mutations"].includes(k) && k !== "__proto__",
  );

const mutation = (id: unknown = 2) => ({
  type: "custom",
  id,
  clientID: "c",
  name: "createTodo",
  args: [{ id: "x" }],
});
const validPush = (m: unknown = mutation()) => ({ clientGroupID: "g", pushVersion: 1, mutations: [m] });

/** Bodies that are wrong in exactly one way, per route. */
const badBodies = fc.oneof(
  notAString.map((v) => ["pull", { clientGroupID: v, clientID: "c", cookie: null }] as const),
  notAString.map((v) => ["pull", { clientGroupID: "g", clientID: v, cookie: null }] as const),
  badCookie.map((v) => ["pull", { clientGroupID: "g", clientID: "c", cookie: v }] as const),
  unknownKey.map((k) => ["pull", { clientGroupID: "g", clientID: "c", cookie: null, [k]: 1 }] as const),
  badId.map((id) => ["push", validPush(mutation(id))] as const),
  notAString.map((v) => ["push", validPush({ ...mutation(), clientID: v })] as const),
  notAString.map((v) => ["push", validPush({ ...mutation(), name: v })] as const),
  fc
    .oneof(fc.string(), fc.object(), fc.integer())
    .map((v) => ["push", validPush({ ...mutation(), args: v })] as const),
  unknownKey.map((k) => ["push", { ...validPush(), [k]: true }] as const),
  badId.map(
    (id) =>
      [
        "replicache/push",
        {
          pushVersion: 1,
          clientGroupID: "rg",
          mutations: [{ clientID: "rc", id, name: "createTodo", args: {}, timestamp: 1 }],
        },
      ] as const,
  ),
  badCookie.map((v) => ["replicache/pull", { pullVersion: 1, clientGroupID: "rg", cookie: v }] as const),
  fc
    .jsonValue()
    .filter((v) => typeof v !== "object" || v === null || Array.isArray(v))
    .map((v) => ["push", v] as const),
);

it("answers every malformed body with a 4xx JSON error and changes nothing", async () => {
  const before = await state();
  await fc.assert(
    fc.asyncProperty(badBodies, async ([route, body]) => {
      expectClientError(await send(route, body));
    }),
    { numRuns: RUNS },
  );
  expect(await state()).toEqual(before);
});

it("answers malformed JSON text with 400", async () => {
  const before = await state();
  await fc.assert(
    fc.asyncProperty(
      fc.string(),
      fc.constantFrom("pull", "push", "replicache/pull", "replicache/push"),
      async (text, route) => {
        let isJson = true;
        try {
          JSON.parse(text);
        } catch {
          isJson = false;
        }
        fc.pre(!isJson);
        const answer = await send(route, undefined, text);
        expectClientError(answer);
        expect(answer.status).toBe(400);
      },
    ),
    { numRuns: RUNS },
  );
  expect(await state()).toEqual(before);
});

it("refuses namespaces outside [A-Za-z0-9_-]{1,64} with 400", async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.string({ maxLength: 80 }).filter((ns) => !/^[A-Za-z0-9_-]{1,64}$/.test(ns)),
      async (ns) => {
        const answer = await send("pull", {}, undefined, `/${encodeURIComponent(ns)}/pull`);
        expectClientError(answer);
        if (ns !== "" && ns !== "." && ns !== "..") expect(answer.status).toBe(400);
      },
    ),
    { numRuns: RUNS },
  );
});

it("refuses huge bodies with 413 and stays up", async () => {
  const before = await state();
  for (const size of [300 * 1024, 5 * 1024 * 1024, 40 * 1024 * 1024]) {
    const answer = await send("push", undefined, JSON.stringify({ pad: "x".repeat(size) }));
    expectClientError(answer);
    expect(answer.status).toBe(413);
  }
  expect(await state()).toEqual(before);
  const health = await fetch(`${url}/${NS}/admin/health`, { headers: { "x-admin-key": ADMIN_KEY } });
  expect(health.status).toBe(200);
});
