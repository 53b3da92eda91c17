// The attacks of `pnpm bench isolation` (bench/isolation.mjs), and the requests they and the
// victims send. Each attack runs in a worker thread of its own, named after it; its groups and its
// user are named after the worker, so no two attacks share a quota or a group.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { workerData } from "node:worker_threads";

const root = join(dirname(fileURLToPath(import.meta.url)), "../..");
// The server's own WebSocket library, as a client.
const WebSocket = createRequire(join(root, "packages/node-host/package.json"))("ws");
/** The attacker's namespace. */
export const ATTACKER = "attack";
/** The items the attacker's namespace is seeded with (two tags each). */
export const SEED_ITEMS = 20_000;

export async function post(url, path, user, body) {
  const response = await fetch(`${url}/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: user },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: response.status, json };
}

export function push(url, ns, user, group, id, name, args) {
  return post(url, `${ns}/push`, user, {
    clientGroupID: group,
    pushVersion: 1,
    mutations: [{ type: "custom", id, clientID: `${group}-c`, name, args: [args], timestamp: 1 }],
  });
}

let groups = 0;
// Each attack runs in a worker of its own: its groups are named after it.
const freshGroup = (prefix) => `${workerData?.name ?? "main"}-${prefix}-${++groups}`;
// Each attack is a user of its own, whose request quota is fresh: an attack refused by its quota
// is measured from a full one, not from what the attacks before it spent.
const attacker = () => `mallory-${workerData?.name ?? "seed"}`;

/** Counts outcomes by a label. */
function tally() {
  const counts = {};
  return {
    counts,
    add(label) {
      counts[label] = (counts[label] ?? 0) + 1;
    },
  };
}

function statusLabel(answer) {
  return answer.status === 200 ? "200" : `${answer.status} ${answer.json?.error ?? ""}`.trim();
}

/**
 * A native pull from no cookie in a new group each time, in a loop: query-aware, putting `patch()`,
 * or plain without one.
 */
async function pullAttack(url, until, patch) {
  const outcome = tally();
  while (Date.now() < until) {
    try {
      outcome.add(
        statusLabel(
          await post(url, `${ATTACKER}/pull`, attacker(), {
            clientGroupID: freshGroup("a"),
            clientID: "a-c",
            cookie: null,
            ...(patch ? { queries: { patch: patch() } } : {}),
          }),
        ),
      );
    } catch (error) {
      outcome.add(`failed ${error.cause?.code ?? error.message}`);
    }
  }
  return outcome.counts;
}

/** One Zero socket of the attacker, with what it was told. */
function zeroSocket(url) {
  const init = ["initConnection", { desiredQueriesPatch: [] }];
  const protocol = encodeURIComponent(
    Buffer.from(JSON.stringify({ initConnectionMessage: init, authToken: attacker() })).toString("base64"),
  );
  const group = freshGroup("z");
  const query = `clientID=${group}-c&clientGroupID=${group}&baseCookie=&lmid=0&wsid=w1`;
  const ws = new WebSocket(`${url.replace("http", "ws")}/${ATTACKER}/sync/v51/connect?${query}`, protocol);
  const outcome = tally();
  let pokes = 0;
  ws.on("message", (data) => {
    const [type, body] = JSON.parse(data.toString());
    if (type === "pokeEnd") pokes++;
    else if (type === "transformError")
      outcome.add(`transformError ${body[0]?.message?.split(":")[0]?.slice(0, 60)}`);
    else if (type === "error") outcome.add(`error ${body.kind}`);
  });
  const closed = new Promise((resolve) => ws.on("close", resolve));
  const opened = new Promise((resolve, reject) => {
    ws.on("open", resolve);
    ws.on("error", reject);
  });
  return { ws, outcome, opened, closed, pokes: () => pokes };
}

/**
 * Runs `attack` on one attacker socket after another (a socket the server closed is replaced)
 * until `until`; answers what the sockets were told.
 */
async function onSockets(url, until, attack) {
  const outcome = tally();
  while (Date.now() < until) {
    const socket = zeroSocket(url);
    try {
      await socket.opened;
    } catch {
      outcome.add("connect failed");
      continue;
    }
    let open = true;
    socket.closed.then(() => {
      open = false;
    });
    await attack(socket, () => open && Date.now() < until, outcome);
    socket.ws.close();
    for (const [label, count] of Object.entries(socket.outcome.counts))
      for (let i = 0; i < count; i++) outcome.add(label);
  }
  return outcome.counts;
}

/**
 * Wake sockets that send `ping` as fast as they can, one after another (a socket the server
 * closed is opened again); counts the pings sent, the pongs heard and how each socket closed.
 */
async function pingFlood(url, until) {
  const outcome = tally();
  outcome.counts.pings = 0;
  outcome.counts.pongs = 0;
  while (Date.now() < until) {
    const ws = new WebSocket(`${url.replace("http", "ws")}/${ATTACKER}/wake?clientID=${freshGroup("w")}`, {
      headers: { authorization: attacker() },
    });
    let open = true;
    const closed = new Promise((resolve) =>
      ws.on("close", (code) => {
        open = false;
        resolve(code);
      }),
    );
    try {
      await new Promise((resolve, reject) => {
        ws.on("open", resolve);
        ws.on("error", reject);
      });
    } catch {
      outcome.add("connect failed");
      await sleep(10);
      continue;
    }
    ws.on("message", () => outcome.counts.pongs++);
    while (open && Date.now() < until) {
      for (let i = 0; i < 500; i++) ws.send("ping");
      outcome.counts.pings += 500;
      await (ws.bufferedAmount > 1 << 20 ? sleep(1) : new Promise((resolve) => setImmediate(resolve)));
    }
    if (open) ws.terminate();
    else outcome.add(`closed ${await closed}`);
  }
  return outcome.counts;
}

/** The wake sockets `socketSpread` opens, each pinging within its own pace. */
const SPREAD_SOCKETS = 5_000;

/**
 * Many wake sockets of one user, each sending `ping` at 10 a second (its own pace) and so never
 * closed for it: together, 50,000 a second into the routing thread.
 */
async function socketSpread(url, until) {
  const outcome = tally();
  outcome.counts.opened = 0;
  outcome.counts.pings = 0;
  outcome.counts.pongs = 0;
  const sockets = [];
  const openOne = () =>
    new Promise((resolve) => {
      const ws = new WebSocket(`${url.replace("http", "ws")}/${ATTACKER}/wake?clientID=${freshGroup("s")}`, {
        headers: { authorization: attacker() },
      });
      ws.on("open", () => {
        outcome.counts.opened++;
        sockets.push(ws);
        ws.on("message", () => outcome.counts.pongs++);
        resolve();
      });
      ws.on("unexpected-response", (_req, res) => {
        outcome.add(`refused ${res.statusCode}`);
        res.resume();
        resolve();
      });
      ws.on("error", () => {
        outcome.add("connect failed");
        resolve();
      });
      ws.on("close", (code) => {
        if (code !== 1005 && code !== 1006) outcome.add(`closed ${code}`);
      });
    });
  for (let opened = 0; opened < SPREAD_SOCKETS && Date.now() < until; opened += 100)
    await Promise.all(Array.from({ length: 100 }, openOne));
  while (Date.now() < until) {
    for (const ws of sockets) {
      if (ws.readyState !== WebSocket.OPEN) continue;
      ws.send("ping");
      outcome.counts.pings++;
    }
    await sleep(100);
  }
  for (const ws of sockets) ws.terminate();
  return outcome.counts;
}

/** Frames of 1,000 puts each (new queries every frame), each sent once the last was answered. */
function putFlood(url, until) {
  let next = 0;
  const heard = (socket) => socket.pokes() + Object.values(socket.outcome.counts).reduce((a, b) => a + b, 0);
  return onSockets(url, until, async (socket, going, outcome) => {
    while (going()) {
      const seen = heard(socket);
      const patch = Array.from({ length: 1000 }, () => {
        const n = next++;
        return { op: "put", hash: `p${n}`, name: "allItems", args: [n] };
      });
      socket.ws.send(JSON.stringify(["changeDesiredQueries", { desiredQueriesPatch: patch }]));
      outcome.add("frames");
      while (going() && heard(socket) === seen) await sleep(5);
    }
  });
}

/** 200 del+put pairs of one query sent at once, then again once a poke came. */
function toggleFlood(url, until) {
  const put = { op: "put", hash: "slow", name: "tagged", args: ["nothing"] };
  const frame = (op) => JSON.stringify(["changeDesiredQueries", { desiredQueriesPatch: [op] }]);
  return onSockets(url, until, async (socket, going, outcome) => {
    socket.ws.send(frame(put));
    while (going()) {
      for (let i = 0; i < 200; i++) {
        socket.ws.send(frame({ op: "del", hash: "slow" }));
        socket.ws.send(frame(put));
      }
      outcome.add("pairs sent (200)");
      const before = socket.pokes();
      while (going() && socket.pokes() === before) await sleep(5);
    }
  });
}

/** Native pulls of one group toggling a query, each from the last answer's cookie. */
async function toggles(url, until) {
  const outcome = tally();
  let cookie = null;
  let on = false;
  while (Date.now() < until) {
    on = !on;
    const patch = on ? [{ op: "put", hash: "t", name: "allItems", args: [] }] : [{ op: "del", hash: "t" }];
    const answer = await post(url, `${ATTACKER}/pull`, attacker(), {
      clientGroupID: "toggler",
      clientID: "toggler-c",
      cookie,
      queries: { patch },
    });
    outcome.add(statusLabel(answer));
    if (answer.status === 200) cookie = answer.json.cookie;
  }
  return outcome.counts;
}

/** The mutations of each `bigPushes` push: the most one push may carry. */
const BIG_PUSH_MUTATIONS = 10_000;

/** Pushes of 10,000 mutations each (a fresh client each), one after another. */
async function bigPushes(url, until) {
  const outcome = tally();
  while (Date.now() < until) {
    const group = freshGroup("p");
    const mutations = Array.from({ length: BIG_PUSH_MUTATIONS }, (_, i) => ({
      type: "custom",
      id: i + 1,
      clientID: `${group}-c`,
      name: "note",
      args: [{ id: `${group}-${i}` }],
      timestamp: 1,
    }));
    try {
      const answer = await post(url, `${ATTACKER}/push`, attacker(), {
        clientGroupID: group,
        pushVersion: 1,
        mutations,
      });
      outcome.add(statusLabel(answer));
    } catch (error) {
      outcome.add(`failed ${error.cause?.code ?? error.message}`);
    }
  }
  return outcome.counts;
}

/** The queries the `manyQueries` group holds, each of nearly every item. */
const MANY_QUERIES = 40;

/**
 * One group holding 40 queries of nearly every item each (20,000 rows), whose client starts over
 * again and again: a pull from no cookie, then from each answer's cookie until unchanged, as a
 * client with its storage cleared would. A reset evaluates every query of the group.
 */
async function manyQueries(url, until) {
  const outcome = tally();
  const group = freshGroup("m");
  const patch = Array.from({ length: MANY_QUERIES }, (_, q) => ({
    op: "put",
    hash: `m${q}`,
    name: "fromId",
    args: [`i${String(q).padStart(6, "0")}`],
  }));
  const pull = (cookie, ops = []) =>
    post(url, `${ATTACKER}/pull`, attacker(), {
      clientGroupID: group,
      clientID: `${group}-c`,
      cookie,
      queries: { patch: ops },
    });
  outcome.add(`put ${statusLabel(await pull(null, patch))}`);
  while (Date.now() < until) {
    try {
      let answer = await pull(null);
      outcome.add(statusLabel(answer));
      let parts = 1;
      while (answer.status === 200 && !answer.json.unchanged && Date.now() < until) {
        answer = await pull(answer.json.cookie);
        parts++;
      }
      outcome.add(`${parts} pulls to unchanged`);
    } catch (error) {
      outcome.add(`failed ${error.cause?.code ?? error.message}`);
    }
  }
  return outcome.counts;
}

/** The queries the `manyScans` group holds, each a scan of every tag. */
const SCAN_QUERIES = 40;

/**
 * One group holding 40 queries that scan every tag (40,000) for a label pattern no index narrows,
 * to hold one row each, whose client writes that row (a tag whose label matches every pattern)
 * and pulls until unchanged, again and again. Each write has every query evaluated again.
 */
async function manyScans(url, until) {
  const outcome = tally();
  const group = freshGroup("s");
  const patch = Array.from({ length: SCAN_QUERIES }, (_, q) => ({
    op: "put",
    hash: `s${q}`,
    name: "labelled",
    args: [`%<${q}>%`],
  }));
  const label = Array.from({ length: SCAN_QUERIES }, (_, q) => `<${q}>`).join("");
  const pull = (cookie, ops = []) =>
    post(url, `${ATTACKER}/pull`, attacker(), {
      clientGroupID: group,
      clientID: `${group}-c`,
      cookie,
      queries: { patch: ops },
    });
  let cookie = null;
  let ops = patch;
  for (let id = 1; Date.now() < until; id++) {
    try {
      const pushed = await post(url, `${ATTACKER}/push`, attacker(), {
        clientGroupID: group,
        pushVersion: 1,
        mutations: [
          {
            type: "custom",
            id,
            clientID: `${group}-c`,
            name: "retag",
            args: [{ id: `${group}-t`, label: `${label}${id}` }],
          },
        ],
      });
      outcome.add(`push ${statusLabel(pushed)}`);
      let parts = 0;
      let answer;
      do {
        answer = await pull(cookie, ops);
        ops = [];
        if (answer.status !== 200) break;
        if (!answer.json.unchanged) cookie = answer.json.cookie;
        parts++;
      } while (!answer.json.unchanged && Date.now() < until);
      outcome.add(statusLabel(answer));
      outcome.add(`${parts} pulls to unchanged`);
    } catch (error) {
      outcome.add(`failed ${error.cause?.code ?? error.message}`);
    }
  }
  return outcome.counts;
}

/**
 * Honest clients, one a second: each puts a query of every item and pulls from the cookies it is
 * answered until the query is complete. Answers the parts each took, and how many finished.
 */
async function wholeHydrations(url, until) {
  const outcome = tally();
  for (let next = Date.now(); Date.now() < until; next += HYDRATION_EVERY_MS) {
    await sleep(Math.max(0, next - Date.now()));
    const group = freshGroup("h");
    let cookie = null;
    let patch = [{ op: "put", hash: "e", name: "everyItem", args: [] }];
    try {
      for (let parts = 1; ; parts++) {
        const answer = await post(url, `${ATTACKER}/pull`, attacker(), {
          clientGroupID: group,
          clientID: `${group}-c`,
          cookie,
          queries: { patch },
        });
        patch = [];
        if (answer.status !== 200) {
          outcome.add(statusLabel(answer));
          break;
        }
        cookie = answer.json.cookie;
        if (answer.json.gotQueries?.includes("e")) {
          outcome.add(`whole in ${parts} pulls`);
          break;
        }
      }
    } catch (error) {
      outcome.add(`failed ${error.cause?.code ?? error.message}`);
    }
  }
  return outcome.counts;
}

/** How often an honest client hydrates a query of every item (wholeHydrations). */
const HYDRATION_EVERY_MS = 1_000;

/** `count` puts of `byIds`, each of `ids` ids (`id(query, i)`), hashed `<prefix><query>`. */
function byIdsPatch(prefix, count, ids, id) {
  return Array.from({ length: count }, (_, q) => ({
    op: "put",
    hash: `${prefix}${q}`,
    name: "byIds",
    args: Array.from({ length: ids }, (_, i) => id(q, i)),
  }));
}

export const ATTACKS = {
  // First, while the attacker's namespace is in its own worker: no honest client should move it.
  wholeHydrations: {
    label:
      "not an attack: clients one after another hydrating a query of every item (20,000 rows) to its end",
    run: wholeHydrations,
  },
  slowQuery: {
    label: "the reported query (EXISTS on tag.itemId, no match), a new group each pull",
    run: (url, until) =>
      pullAttack(url, until, () => [{ op: "put", hash: "q", name: "tagged", args: ["nothing"] }]),
  },
  heavyQuery: {
    label: "an EXISTS no index serves (every probe reads every tag)",
    run: (url, until) =>
      pullAttack(url, until, () => [{ op: "put", hash: "h", name: "sameKind", args: ["%zzz%"] }]),
  },
  witnessQuery: {
    label: "an EXISTS an OR's other side spares, whose witnesses read every tag for every item",
    run: (url, until) =>
      pullAttack(url, until, () => [{ op: "put", hash: "w", name: "kindOrTagged", args: ["%zzz%"] }]),
  },
  putFlood: { label: "Zero changeDesiredQueries frames of 1,000 puts", run: putFlood },
  pingFlood: { label: "wake sockets sending ping as fast as they can", run: pingFlood },
  socketSpread: {
    label: `${SPREAD_SOCKETS.toLocaleString("en")} wake sockets of one user, each pinging within its own pace`,
    run: socketSpread,
  },
  toggleFlood: { label: "Zero del+put pairs of one query, 200 at a time", run: toggleFlood },
  argumentFlood: {
    label: "native pulls of 300 queries of 1,000 ids each",
    run: (url, until) => pullAttack(url, until, () => byIdsPatch("b", 300, 1000, (q, i) => `id-${q}-${i}`)),
  },
  patchFlood: {
    label: "native pulls of 1,000 queries of 30 ids each (within the caps: applied in steps)",
    run: (url, until) =>
      pullAttack(url, until, () =>
        byIdsPatch("p", 1000, 30, (q, i) => `i${String((q * 30 + i) % SEED_ITEMS).padStart(6, "0")}`),
      ),
  },
  queryToggles: { label: "native pulls toggling one query", run: toggles },
  bigPushes: {
    label: `pushes of ${BIG_PUSH_MUTATIONS.toLocaleString("en")} mutations each (the most one push carries), a new client each`,
    run: bigPushes,
  },
  resetPulls: {
    label: "plain pulls from no cookie, each of every row (60,000)",
    run: (url, until) => pullAttack(url, until),
  },
  manyQueries: {
    label: `a group of ${MANY_QUERIES} queries of nearly every item each, starting over from no cookie`,
    run: manyQueries,
  },
  manyScans: {
    label: `a group of ${SCAN_QUERIES} queries that scan every tag to hold one, each write of its client evaluating them all`,
    run: manyScans,
  },
  wholeTable: {
    label: "a query of every item (20,000 rows, no EXISTS: not paged), a new group each pull",
    run: (url, until) =>
      pullAttack(url, until, () => [{ op: "put", hash: "e", name: "everyItem", args: [] }]),
  },
};
