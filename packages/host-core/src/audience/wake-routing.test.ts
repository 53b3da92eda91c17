import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { memoryStore, testService } from "../../test/test-host.js";
import type { Claims } from "../auth/claims.js";
import type { WeirConfig } from "../config/weir-config.js";
import type { Wake } from "../ports/wake.js";
import { AudienceIndex } from "./audience-index.js";
import { subscriptionFor } from "./subscription.js";

const USERS = ["u0", "u1", "u2", "u3"];
const IDS = ["n0", "n1", "n2", "n3"];

/** Filters of `note`; `narrows` says the docs promise no wake beyond what the filter admits. */
const FILTERS: Array<{ name: string; sql: string; params(user: string): unknown[]; narrows: boolean }> = [
  { name: "owner", sql: "owner = ?", params: (u) => [u], narrows: true },
  { name: "owner or public", sql: "owner = ? OR public = 1", params: (u) => [u], narrows: true },
  {
    name: "public or qualified owner",
    sql: 'public = 1 OR "note"."owner" = ?',
    params: (u) => [u],
    narrows: true,
  },
  { name: "owner and private", sql: "(owner = ?) AND public = 0", params: (u) => [u], narrows: true },
  { name: "integer key", sql: "uid = ?", params: (u) => [USERS.indexOf(u)], narrows: true },
  { name: "key and a bound condition", sql: "owner = ? AND uid <> ?", params: (u) => [u, 9], narrows: false },
  { name: "an admin sees all", sql: "owner = ? OR ? = 'u0'", params: (u) => [u, u], narrows: false },
  { name: "a function of the column", sql: "lower(owner) = lower(?)", params: (u) => [u], narrows: false },
];

type Op =
  | { kind: "put"; id: string; owner: string; uid: number; public: boolean }
  | { kind: "delete"; id: string }
  | { kind: "log"; id: string };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("put" as const),
    id: fc.constantFrom(...IDS),
    owner: fc.constantFrom(...USERS),
    uid: fc.integer({ min: 0, max: 3 }),
    public: fc.boolean(),
  }),
  fc.record({ kind: fc.constant("delete" as const), id: fc.constantFrom(...IDS) }),
  fc.record({ kind: fc.constant("log" as const), id: fc.constantFrom(...IDS) }),
);

type Image = { id: string; owner: string; uid: number; public: number };

/** Evaluates a filter on one row image as SQLite does (the table's column types). */
const judge = new Database(":memory:");
judge.exec("CREATE TABLE note (id TEXT, owner TEXT, uid INTEGER, public INTEGER)");
function passes(sql: string, params: unknown[], image: Image): boolean {
  judge.exec("DELETE FROM note");
  judge.prepare("INSERT INTO note VALUES (?, ?, ?, ?)").run(image.id, image.owner, image.uid, image.public);
  return judge.prepare(`SELECT 1 FROM note WHERE ${sql}`).all(...(params as never[])).length > 0;
}

describe("wake routing (model)", () => {
  it("wakes every socket that could see a commit, and for narrowing filters no other", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...FILTERS),
        fc.array(fc.constantFrom(...USERS), { minLength: 1, maxLength: 6 }),
        fc.array(fc.array(op, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 6 }),
        async (filter, socketUsers, commits) => {
          const config: WeirConfig = {
            schema: {
              tables: {
                note: {
                  columns: { id: "string", owner: "string", uid: "integer", public: "boolean" },
                  primaryKey: ["id"],
                },
                log: { columns: { id: "string" }, primaryKey: ["id"] },
              },
            },
            mutators: {},
            authenticate: () => null,
            wakeWindowMs: 0,
            visibility: (claims: Claims) => ({
              note: { sql: filter.sql, params: filter.params(claims.userID) as never },
            }),
          };
          const sockets = new AudienceIndex<number>();
          for (const [socket, user] of socketUsers.entries()) {
            sockets.add(socket, subscriptionFor(config.schema, config.visibility, { userID: user }));
          }
          let woken: Set<number> | null = null;
          const wake: Wake = {
            send: (_ns, audience) => {
              woken = sockets.select(audience);
              return woken.size;
            },
            count: () => sockets.size,
            probes: () => sockets.probes(),
          };
          const store = memoryStore();
          const { service } = await testService(config, { store, wake });
          try {
            for (const ops of commits) {
              const images: Image[] = [];
              let logged = false;
              woken = null;
              service.write((db) => {
                const read = (id: string) =>
                  db
                    .query("SELECT id, owner, uid, public FROM note WHERE id = ?", [id])
                    .map(([i, o, u, p]) => ({
                      id: String(i),
                      owner: String(o),
                      uid: Number(u),
                      public: Number(p),
                    }))[0];
                for (const change of ops) {
                  if (change.kind === "log") {
                    db.exec("INSERT OR REPLACE INTO log (id) VALUES (?)", [change.id]);
                    logged = true;
                    continue;
                  }
                  const before = read(change.id);
                  if (change.kind === "put") {
                    db.exec(
                      "INSERT INTO note (id, owner, uid, public) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, uid = excluded.uid, public = excluded.public",
                      [change.id, change.owner, change.uid, change.public ? 1 : 0],
                    );
                  } else db.exec("DELETE FROM note WHERE id = ?", [change.id]);
                  const after = read(change.id);
                  if (before) images.push(before);
                  if (after) images.push(after);
                }
              });
              const couldSee = (user: string) =>
                logged || images.some((image) => passes(filter.sql, filter.params(user), image));
              socketUsers.forEach((user, socket) => {
                const heard = woken?.has(socket) ?? false;
                if (couldSee(user)) expect(heard, `${user} missed a wake (${filter.name})`).toBe(true);
                else if (filter.narrows)
                  expect(heard, `${user} woken for nothing (${filter.name})`).toBe(false);
              });
            }
          } finally {
            service.close();
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});
