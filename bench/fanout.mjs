#!/usr/bin/env node
// `pnpm bench fanout`: what one user's writes cost a namespace as more users connect. The todo
// example's config (bench/fanout/todo.config.ts) under `weir serve` on loopback; N users, each
// with one wake socket that pulls on `wake` (as the example's page does), and one writer (the
// first user, from another tab) pushing `createTodo` at a fixed rate. Then the same with N raw
// Zero sockets of different users, each holding the query of its own todos. Figures per N: the
// server's CPU per write (its process's user + system time over the phase, the pulls and pokes
// the writes caused included), pulls (pokes) per write, and the time from sending a write to its
// row at the writer's other tab (p95). The last line is one JSON object.
//
//   pnpm bench fanout [--sizes 10,100,1000,5000] [--seconds 5] [--rate 20] [--root <repo>]
//   --root: serve with another checkout's build (its packages/cli/dist), e.g. an older one
import { spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";

const here = join(dirname(fileURLToPath(import.meta.url)), "..");
const WebSocket = createRequire(join(here, "packages/node-host/package.json"))("ws");

function option(name, fallback) {
  const at = process.argv.indexOf(`--${name}`);
  return at >= 0 ? process.argv[at + 1] : fallback;
}

const root = resolve(option("root", here));
const weirBin = join(root, "packages/cli/dist/weir.js");
const configFile = join(root, "bench/fanout/todo.config.ts");
const SIZES = option("sizes", "10,100,1000,5000").split(",").map(Number);
const SECONDS = Number(option("seconds", "5"));
const RATE = Number(option("rate", "20"));
const WARMUP_SECONDS = 1;
/** How many of the clients' setup requests run at once. */
const SETUP_CONCURRENCY = 50;

function log(line) {
  process.stderr.write(`${line}\n`);
}

if (!existsSync(weirBin) || !existsSync(configFile)) {
  log(`bench fanout: ${weirBin} or ${configFile} is missing (pnpm build first)`);
  process.exit(1);
}

/** Starts `weir serve` whose stdout goes to a file, and waits for its {"url"} line. */
async function startServer(dir) {
  const logFile = join(dir, "server.log");
  const fd = openSync(logFile, "w");
  const args = [
    weirBin,
    "serve",
    "--config",
    configFile,
    "--port",
    "0",
    "--data-dir",
    join(dir, "data"),
    "--json",
  ];
  const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", fd, "inherit"] });
  closeSync(fd);
  const exited = new Promise((done) => child.once("exit", (code) => done(code)));
  for (let waited = 0; waited < 30_000; waited += 50) {
    if (child.exitCode !== null) throw new Error(`weir serve exited with ${child.exitCode}`);
    const line = readFileSync(logFile, "utf8")
      .split("\n")
      .find((l) => l.startsWith('{"url":'));
    if (line) return { child, exited, url: JSON.parse(line).url };
    await sleep(50);
  }
  child.kill("SIGKILL");
  throw new Error("weir serve did not print its URL within 30 s");
}

async function stopServer(server) {
  server.child.kill("SIGTERM");
  await Promise.race([server.exited, sleep(10_000).then(() => server.child.kill("SIGKILL"))]);
}

/** The process's CPU time (user + system) in ms, from /proc. */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
  // utime and stime are fields 14 and 15 of the whole line, in clock ticks of 10 ms.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMB(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Math.round(Number(match[1]) / 1024) : 0;
}

async function inBatches(items, fn) {
  for (let i = 0; i < items.length; i += SETUP_CONCURRENCY)
    await Promise.all(items.slice(i, i + SETUP_CONCURRENCY).map(fn));
}

/** fetch, again after a connection the server closed meanwhile (a kept-alive socket's race). */
async function post(url, user, body) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: user },
        body: JSON.stringify(body),
      });
    } catch (error) {
      if (attempt >= 3) throw error;
    }
  }
}

function p95(values) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))] * 10) / 10;
}

/** A browser tab of the example's page: a wake socket, and a pull whenever it hears `wake`. */
class WakeTab {
  constructor(url, ns, user, stats, onRow) {
    Object.assign(this, { url, ns, user, stats, onRow });
    this.clientID = `${user}-tab`;
    this.group = `${user}-group`;
    this.cookie = null;
    this.pulling = null;
    this.again = false;
  }

  async open() {
    const ws = new WebSocket(`${this.url.replace("http", "ws")}/${this.ns}/wake?clientID=${this.clientID}`, {
      headers: { authorization: this.user },
    });
    await new Promise((done, fail) => {
      ws.once("open", done);
      ws.once("error", fail);
    });
    ws.on("message", (data) => {
      if (data.toString() === "wake") this.pull();
    });
    this.ws = ws;
  }

  /** Pulls until the answer is unchanged; a wake during a pull pulls again after it. */
  pull() {
    if (this.pulling) {
      this.again = true;
      return this.pulling;
    }
    this.pulling = (async () => {
      do {
        this.again = false;
        const response = await post(`${this.url}/${this.ns}/pull`, this.user, {
          clientGroupID: this.group,
          clientID: this.clientID,
          cookie: this.cookie,
        });
        const answer = await response.json();
        this.stats.pulls++;
        if (answer.unchanged) continue;
        this.cookie = answer.cookie;
        for (const op of answer.rowsPatch ?? []) if (op.op === "put") this.onRow?.(op.value.id);
      } while (this.again);
      this.pulling = null;
    })();
    return this.pulling;
  }
}

/** Zero's Sec-WebSocket-Protocol: URI-encoded base64 of the first message and the token. */
function zeroProtocol(init, authToken) {
  return encodeURIComponent(
    Buffer.from(JSON.stringify({ initConnectionMessage: init, authToken })).toString("base64"),
  );
}

/** A raw Zero socket holding the query of its user's todos. */
class ZeroTab {
  constructor(url, ns, user, stats, onRow) {
    Object.assign(this, { url, ns, user, stats, onRow });
  }

  async open() {
    const query = `clientID=${this.user}-c&clientGroupID=${this.user}-zg&baseCookie=&lmid=0&wsid=w1&ts=${Date.now()}`;
    const init = [
      "initConnection",
      { desiredQueriesPatch: [{ op: "put", hash: "mine", name: "myTodos", args: [], ttl: 300_000 }] },
    ];
    const ws = new WebSocket(
      `${this.url.replace("http", "ws")}/${this.ns}/sync/v51/connect?${query}`,
      zeroProtocol(init, this.user),
    );
    let ready;
    const first = new Promise((done) => {
      ready = done;
    });
    ws.on("message", (data) => {
      const [type, body] = JSON.parse(data.toString());
      if (type === "pokeEnd") {
        this.stats.pokes++;
        ready();
      } else if (type === "pokePart") {
        for (const op of body.rowsPatch ?? []) if (op.op === "put") this.onRow?.(op.value.id);
      } else if (type === "error") log(`bench fanout: zero error ${JSON.stringify(body)}`);
    });
    ws.on("close", (code, reason) => {
      if (!this.closing) log(`bench fanout: a Zero socket of ${this.user} closed: ${code} ${reason}`);
    });
    await new Promise((done, fail) => {
      ws.once("open", done);
      ws.once("error", fail);
    });
    await first;
    this.ws = ws;
  }
}

/** One phase: N tabs of `Tab`, a writer at RATE, the server's CPU and the clients' work per write. */
async function phase(kind, n) {
  const dir = mkdtempSync(join(tmpdir(), "weir-bench-fanout-"));
  const server = await startServer(dir);
  const ns = "todo";
  const stats = { pulls: 0, pokes: 0 };
  const sent = new Map();
  const visible = [];
  const onRow = (id) => {
    const at = sent.get(id);
    if (at !== undefined) {
      visible.push(performance.now() - at);
      sent.delete(id);
    }
  };
  const Tab = kind === "wake" ? WakeTab : ZeroTab;
  const tabs = Array.from(
    { length: n },
    (_, i) => new Tab(server.url, ns, `u${i}`, stats, i === 0 ? onRow : null),
  );
  try {
    await inBatches(tabs, async (tab) => {
      await tab.open();
      if (kind === "wake") await tab.pull();
    });
    const rss = rssMB(server.child.pid);
    let mutationID = 0;
    const write = async (measured) => {
      const id = `w${++mutationID}`;
      if (measured) sent.set(id, performance.now());
      const response = await post(`${server.url}/${ns}/push`, "u0", {
        clientGroupID: "writer-group",
        pushVersion: 1,
        mutations: [
          {
            type: "custom",
            id: mutationID,
            clientID: "writer",
            name: "createTodo",
            args: [{ id, text: "buy milk", done: false, sort: mutationID }],
            timestamp: Date.now(),
          },
        ],
      });
      if (response.status !== 200) throw new Error(`push answered ${response.status}`);
      await response.text();
    };
    // One push at a time, as a client pushes (its mutation ids must arrive in order): a write
    // whose time came while the previous push was out waits for it.
    const run = async (seconds, measured) => {
      let chain = Promise.resolve();
      const start = performance.now();
      const count = seconds * RATE;
      for (let i = 0; i < count; i++) {
        const due = start + (i * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        chain = chain.then(() => write(measured));
      }
      await chain;
      return count;
    };
    const settle = async () => {
      // Until the writes' pulls and pokes are done: every write seen at the writer's other tab,
      // nothing in flight and nothing more arriving (for a while).
      for (let waited = 0, last = -1; waited < 30_000; waited += 250) {
        const busy = sent.size > 0 || (kind === "wake" && tabs.some((tab) => tab.pulling));
        const now = stats.pulls + stats.pokes;
        if (!busy && now === last) return;
        last = now;
        await sleep(250);
      }
    };
    await run(WARMUP_SECONDS, false);
    await settle();
    const cpuBefore = cpuMs(server.child.pid);
    const before = { ...stats };
    const writes = await run(SECONDS, true);
    await settle();
    const cpu = cpuMs(server.child.pid) - cpuBefore;
    const work = kind === "wake" ? stats.pulls - before.pulls : stats.pokes - before.pokes;
    const result = {
      cpuMsPerWrite: Math.round((cpu / writes) * 100) / 100,
      perWrite: Math.round((work / writes) * 100) / 100,
      visibleP95Ms: p95(visible),
      missed: sent.size,
      rssMB: Math.max(rss, rssMB(server.child.pid)),
    };
    log(`bench fanout: ${kind} N=${n}: ${JSON.stringify(result)}`);
    return result;
  } finally {
    for (const tab of tabs) {
      tab.closing = true;
      tab.ws?.terminate();
    }
    await stopServer(server);
    rmSync(dir, { recursive: true, force: true });
  }
}

const figures = {};
const zero = {};
for (const n of SIZES) {
  const wake = await phase("wake", n);
  figures[`cpuMsPerWriteAt${n}`] = wake.cpuMsPerWrite;
  figures[`pullsPerWriteAt${n}`] = wake.perWrite;
  figures[`visibleP95MsAt${n}`] = wake.visibleP95Ms;
  figures[`rssMBAt${n}`] = wake.rssMB;
  figures[`missedAt${n}`] = wake.missed;
  const z = await phase("zero", n);
  zero[`zeroCpuMsPerWriteAt${n}`] = z.cpuMsPerWrite;
  zero[`zeroPokesPerWriteAt${n}`] = z.perWrite;
  zero[`zeroVisibleP95MsAt${n}`] = z.visibleP95Ms;
  zero[`zeroRssMBAt${n}`] = z.rssMB;
  zero[`zeroMissedAt${n}`] = z.missed;
}

const ratio = (a, b) => (a != null && b > 0 ? Math.round((a / b) * 100) / 100 : null);
const ratios = {
  cpuPerWrite1000vs10: ratio(figures.cpuMsPerWriteAt1000, figures.cpuMsPerWriteAt10),
  zeroCpuPerWrite1000vs10: ratio(zero.zeroCpuMsPerWriteAt1000, zero.zeroCpuMsPerWriteAt10),
};
const meets = {
  cpuPerWrite1000AtMost2x10: ratios.cpuPerWrite1000vs10 != null ? ratios.cpuPerWrite1000vs10 <= 2 : null,
  pullsPerWriteAt1000AtMost2: figures.pullsPerWriteAt1000 != null ? figures.pullsPerWriteAt1000 <= 2 : null,
  visibleP95At1000Under25Ms: figures.visibleP95MsAt1000 != null ? figures.visibleP95MsAt1000 < 25 : null,
  rssAt5000Under1GB:
    figures.rssMBAt5000 != null ? figures.rssMBAt5000 < 1024 && zero.zeroRssMBAt5000 < 1024 : null,
};
console.log(
  JSON.stringify({
    suite: "fanout",
    ...figures,
    ...zero,
    ratios,
    meets,
    settings: { sizes: SIZES, seconds: SECONDS, ratePerSec: RATE, warmupSeconds: WARMUP_SECONDS },
  }),
);
