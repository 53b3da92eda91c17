import { describe, expect, it } from "vitest";
import { DATABASES, testEngine } from "../test/databases.js";
import { todoSchema } from "../test/fixtures.js";
import type { PullInput } from "./types.js";

const base = { clientGroupID: "g", userID: "u" } as const;

describe.each(DATABASES)("a pristine database on $kind", ({ open }) => {
  it("is pristine until the schema is installed", async () => {
    const engine = await testEngine();
    const db = open();
    expect(engine.isPristine(db.adapter)).toBe(true);
    db.transaction(() => engine.install(db.adapter, todoSchema));
    expect(engine.isPristine(db.adapter)).toBe(false);
  });

  it.each([
    { dialect: "native", cookie: null },
    { dialect: "native", cookie: 0 },
    { dialect: "replicache", cookie: null },
    { dialect: "replicache", cookie: 0 },
  ] as const)("answers a $dialect pull from $cookie as an installed empty namespace does", async (input) => {
    const engine = await testEngine();
    const pristine = open();
    const pull: PullInput = { ...base, ...input };
    const answer = engine.pullPristine(pristine.adapter, pull);
    // Nothing was read or written.
    expect(pristine.totalChanges()).toBe(0);
    expect(engine.isPristine(pristine.adapter)).toBe(true);
    const installed = open();
    installed.transaction(() => engine.install(installed.adapter, todoSchema));
    const expected = installed.transaction(() => engine.pull(installed.adapter, pull));
    expect(answer).toEqual(expected);
  });

  it("refuses a cookie ahead of version 0 as an installed empty namespace does", async () => {
    const engine = await testEngine();
    const installed = open();
    installed.transaction(() => engine.install(installed.adapter, todoSchema));
    const pull: PullInput = { ...base, cookie: 3 };
    let expected: unknown;
    try {
      installed.transaction(() => engine.pull(installed.adapter, pull));
    } catch (error) {
      expected = error;
    }
    expect(expected).toMatchObject({ code: "cookie_from_future" });
    expect(() => engine.pullPristine(open().adapter, pull)).toThrow(expected as Error);
  });

  it("keeps the group's owner until the install registers it, as the pull would have", async () => {
    const engine = await testEngine();
    const db = open();
    const claims = { todo: { sql: "owner = ?", params: ["u"] } };
    expect(engine.pullPristine(db.adapter, { ...base, cookie: null, visibility: claims })?.cookie).toBe(0);
    const stolen = { ...base, userID: "mallory", cookie: null };
    expect(() => engine.pullPristine(db.adapter, stolen)).toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
    expect(db.totalChanges()).toBe(0);
    db.transaction(() => engine.install(db.adapter, todoSchema));
    expect(() => db.transaction(() => engine.pull(db.adapter, stolen))).toThrow(
      expect.objectContaining({ code: "forbidden" }),
    );
    // Registered under the visibility it was answered under: no reset from its cookie.
    const next = db.transaction(() => engine.pull(db.adapter, { ...base, cookie: 0, visibility: claims }));
    expect(next).toMatchObject({ unchanged: true, reset: false });
  });
});
