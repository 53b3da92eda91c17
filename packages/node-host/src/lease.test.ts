import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  acquireLease,
  isHolderAlive,
  LeaseHeldError,
  type LeaseHolder,
  leaseFileFor,
  readLease,
  tryAcquireLease,
} from "./lease.js";

let dir: string;
let db: string;
const children: ChildProcess[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "weir-lease-"));
  db = join(dir, "app.sqlite");
});

afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

function writeHolder(holder: Partial<LeaseHolder>): void {
  const full: LeaseHolder = {
    pid: 1,
    host: hostname(),
    command: "weir serve",
    started: new Date().toISOString(),
    token: "someone-else",
    ...holder,
  };
  writeFileSync(leaseFileFor(db), JSON.stringify(full));
}

/** A pid that belonged to a process which has exited. */
function deadPid(): number {
  const result = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  return Number(result.stdout);
}

function liveChild(): ChildProcess {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  children.push(child);
  return child;
}

describe("lease", () => {
  it("takes a free lease, names the holder, and releases it", async () => {
    const lease = await acquireLease(db, { command: "weir maintain app.sqlite" });
    const holder = readLease(db);
    expect(holder).toMatchObject({
      pid: process.pid,
      host: hostname(),
      command: "weir maintain app.sqlite",
    });
    expect(Number.isNaN(Date.parse(holder!.started))).toBe(false);
    lease.release();
    expect(existsSync(leaseFileFor(db))).toBe(false);
    // No temporary or stale files are left beside the database.
    expect(readdirSync(dir)).toEqual([]);
  });

  it("refuses a second taker while the first holds it", async () => {
    const first = tryAcquireLease(db, { command: "first" })!;
    expect(first).not.toBeNull();
    expect(tryAcquireLease(db, { command: "second" })).toBeNull();
    const error = await acquireLease(db, { command: "second", waitMs: 50, pollMs: 10 }).catch((e) => e);
    expect(error).toBeInstanceOf(LeaseHeldError);
    expect(error.holder.command).toBe("first");
    expect(error.message).toContain(`pid ${process.pid}`);
    expect(error.message).toContain("first");
    first.release();
    expect(tryAcquireLease(db)).not.toBeNull();
  });

  it("a scheduled taker yields at once with the holder named", async () => {
    const child = liveChild();
    writeHolder({ pid: child.pid!, command: "weir serve --port 4848" });
    const error = await acquireLease(db, { scheduled: true, waitMs: 60_000 }).catch((e) => e);
    expect(error).toBeInstanceOf(LeaseHeldError);
    expect(error.scheduled).toBe(true);
    expect(error.message).toContain("yields");
    expect(error.message).toContain("weir serve --port 4848");
    expect(readLease(db)!.pid).toBe(child.pid);
  });

  it("a waiting taker gets the lease once the holder lets go", async () => {
    const first = tryAcquireLease(db)!;
    const waiting = acquireLease(db, { command: "waiter", waitMs: 10_000, pollMs: 5 });
    setTimeout(() => first.release(), 30);
    const lease = await waiting;
    expect(readLease(db)!.command).toBe("waiter");
    lease.release();
  });

  it("takes over a lease whose holder process is dead", async () => {
    const pid = deadPid();
    writeHolder({ pid });
    expect(isHolderAlive(readLease(db)!)).toBe(false);
    const lease = await acquireLease(db, { command: "taker", waitMs: 0 });
    expect(readLease(db)).toMatchObject({ pid: process.pid, command: "taker" });
    lease.release();
    expect(readdirSync(dir)).toEqual([]);
  });

  it("refuses a live holder in another process, then takes over once it is killed", async () => {
    const child = liveChild();
    writeHolder({ pid: child.pid! });
    expect(tryAcquireLease(db)).toBeNull();
    await new Promise((resolve) => {
      child.once("exit", resolve);
      child.kill("SIGKILL");
    });
    expect(tryAcquireLease(db)).not.toBeNull();
  });

  it("counts a holder on another host as alive", () => {
    writeHolder({ pid: deadPid(), host: `${hostname()}-elsewhere` });
    expect(tryAcquireLease(db)).toBeNull();
  });

  it("refuses an unreadable lease file and leaves it in place", async () => {
    writeFileSync(leaseFileFor(db), "not a lease");
    const error = await acquireLease(db, { waitMs: 0 }).catch((e) => e);
    expect(error).toBeInstanceOf(LeaseHeldError);
    expect(error.holder).toBeNull();
    expect(error.message).toContain("not readable");
    expect(readFileSync(leaseFileFor(db), "utf8")).toBe("not a lease");
  });

  it("release never removes a lease that another holder took since", () => {
    const first = tryAcquireLease(db)!;
    // Simulate the lease being taken over after this holder was presumed dead.
    writeHolder({ token: "later-holder" });
    first.release();
    expect(readLease(db)!.token).toBe("later-holder");
  });
});
