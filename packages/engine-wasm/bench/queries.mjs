// `pnpm bench queries`: query-aware pull in process, on better-sqlite3 (file database, WAL).
// A chat of 100,000 messages in 200 channels and 1,000 users; client groups subscribe to 5
// queries each (a channel's last 50 messages with their authors), and groups holding a whole
// channel (a query without a limit), which also share pulls as groups alike. Prints one line
// per figure, then one JSON object as the last line. `--quick` uses fewer groups; `--cpu` times
// by CPU time.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { betterSqliteAdapter } from "../dist/better-sqlite3-adapter.js";
import { Engine, engineWasmUrl } from "../dist/index.js";

const quick = process.argv.includes("--quick");
const MESSAGES = 100_000;
const CHANNELS = 200;
const USERS = 1_000;
const GROUPS = quick ? 200 : 1_000;
const QUERIES_PER_GROUP = 5;
const WRITES = quick ? 10 : 30;

const schema = {
  tables: {
    message: {
      columns: { id: "string", channelId: "string", authorId: "string", at: "integer", text: "string" },
      primaryKey: ["id"],
    },
    user: { columns: { id: "string", name: "string" }, primaryKey: ["id"] },
  },
};

const channelMessages = (channelId) => ({
  table: "message",
  where: {
    type: "simple",
    op: "=",
    left: { type: "column", name: "channelId" },
    right: { type: "literal", value: channelId },
  },
  orderBy: [["at", "desc"]],
  limit: 50,
  related: [{ correlation: { parentField: ["authorId"], childField: ["id"] }, subquery: { table: "user" } }],
});

const dir = mkdtempSync(join(tmpdir(), "weir-bench-queries-"));
const engine = await Engine.load(readFileSync(engineWasmUrl));
const db = new Database(join(dir, "chat.db"));
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
const adapter = betterSqliteAdapter(db);
const run = db.transaction((fn) => fn());
const tx = (fn) => run(fn);
tx(() => engine.install(adapter, schema));
// The app's index for its channel queries (indexes are the app's, beside its tables). It
// follows the query's order as completed by the key (at descending, then id ascending), so a
// window is read in order and needs no sort.
db.exec('CREATE INDEX message_channel_at ON message ("channelId", "at" DESC)');
let mutation = 0;
tx(() => {
  const user = db.prepare("INSERT INTO user VALUES (?, ?)");
  for (let i = 0; i < USERS; i++) user.run(`u${i}`, `User ${i}`);
  const message = db.prepare("INSERT INTO message VALUES (?, ?, ?, ?, ?)");
  for (let i = 0; i < MESSAGES; i++)
    message.run(`m${i}`, `c${i % CHANNELS}`, `u${(i * 7) % USERS}`, i, `message ${i}`);
  engine.finalize(adapter, { clientGroupID: "writer", clientID: "writer", mutationID: ++mutation });
});
db.exec("ANALYZE");

const cookies = new Map();
function pull(group, patch) {
  const input = {
    clientGroupID: group,
    userID: "bench",
    cookie: cookies.get(group) ?? null,
    queries: { patch },
  };
  const result = engine.pullIfCaughtUp(adapter, input) ?? tx(() => engine.pull(adapter, input));
  cookies.set(group, result.cookie);
  return result;
}

function percentile(samples, p) {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}
// `--cpu` times by the process's CPU time instead of the wall clock: on a shared machine, a
// spell without the core then does not count.
const cpu = process.argv.includes("--cpu");
const now = () => (cpu ? process.cpuUsage() : process.hrtime.bigint());
const ms = (start) => {
  if (!cpu) return Number(process.hrtime.bigint() - start) / 1e6;
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

// Groups subscribe: group g follows channels g, g+1, ... (mod 200), so each channel has
// GROUPS * 5 / 200 followers. Hydration is measured over every subscription; a query another
// group holds at the same version takes that group's rows (queriesCopied). The first 40 groups
// subscribe to each channel once: no other group holds their queries, and every one is
// evaluated (the unshared figure).
const channelOf = (g, q) => `c${(g * QUERIES_PER_GROUP + q) % CHANNELS}`;
const UNSHARED_GROUPS = CHANNELS / QUERIES_PER_GROUP;
let hydratedRows = 0;
let hydrateMs = 0;
let unsharedRows = 0;
let unsharedMs = 0;
let copied = 0;
/** Groups `prefix`0.. subscribe, group g to the channels of channelOf(first + g, q). Answers their rows, time and copies. */
function subscribe(prefix, count, first = 0) {
  const total = { rows: 0, ms: 0, copied: 0 };
  for (let g = 0; g < count; g++) {
    const patch = [];
    for (let q = 0; q < QUERIES_PER_GROUP; q++) {
      const channel = channelOf(first + g, q);
      patch.push({
        op: "put",
        hash: channel,
        name: "channelMessages",
        args: { channel },
        ast: channelMessages(channel),
      });
    }
    const start = now();
    const result = pull(`${prefix}${g}`, patch);
    const took = ms(start);
    total.ms += took;
    total.rows += result.puts;
    total.copied += result.queriesCopied;
    if (prefix === "g" && g < UNSHARED_GROUPS) {
      if (result.queriesCopied !== 0) throw new Error(`group ${g} copied ${result.queriesCopied} queries`);
      unsharedMs += took;
      unsharedRows += result.puts;
    }
  }
  return total;
}
const hydration = subscribe("g", GROUPS);
hydratedRows = hydration.rows;
hydrateMs = hydration.ms;
copied = hydration.copied;
const hydrateRowsPerSec = Math.round(hydratedRows / (hydrateMs / 1000));
const hydrateUnsharedRowsPerSec = Math.round(unsharedRows / (unsharedMs / 1000));
console.log(
  `hydration: ${hydratedRows} rows for ${GROUPS * QUERIES_PER_GROUP} queries (${copied} copied), ${hydrateRowsPerSec} rows/s; unshared (first ${UNSHARED_GROUPS} groups) ${hydrateUnsharedRowsPerSec} rows/s`,
);

// Nothing changed: a subscribed group's pull.
const idle = [];
for (let g = 0; g < GROUPS; g++) {
  const start = now();
  pull(`g${g}`, []);
  idle.push(ms(start) * 1000);
}
const idleQueryPullMicros = Math.round(percentile(idle, 0.5));
console.log(`idle pull: ${idleQueryPullMicros} µs (p50)`);

function writeMessage(id, channel, at) {
  tx(() => {
    db.prepare("INSERT INTO message VALUES (?, ?, ?, ?, ?)").run(id, channel, "u1", at, "new");
    engine.finalize(adapter, { clientGroupID: "writer", clientID: "writer", mutationID: ++mutation });
  });
}

/** Every group following `channel` pulls; answers the queries they recomputed. */
function followersPull(channel, samples) {
  let recomputed = 0;
  for (let g = 0; g < GROUPS; g++) {
    let follows = false;
    for (let q = 0; q < QUERIES_PER_GROUP; q++) follows ||= channelOf(g, q) === channel;
    if (!follows) continue;
    const start = now();
    const result = pull(`g${g}`, []);
    samples?.push(ms(start));
    recomputed += result.queriesRecomputed;
  }
  return recomputed;
}

// One message written, then every group following its channel pulls.
function afterWrites(label) {
  const samples = [];
  let recomputed = 0;
  for (let w = 0; w < WRITES; w++) {
    writeMessage(`n${label}${w}`, `c${w % CHANNELS}`, MESSAGES + w);
    recomputed += followersPull(`c${w % CHANNELS}`, samples);
  }
  const p50 = percentile(samples, 0.5);
  const p95 = percentile(samples, 0.95);
  console.log(
    `${label}: pull after a write p50 ${p50.toFixed(3)} ms, p95 ${p95.toFixed(3)} ms over ${samples.length} pulls (${recomputed} queries recomputed)`,
  );
  return { p50, p95 };
}
const round = (x) => Math.round(x * 1000) / 1000;
const base = afterWrites("base");

// Idle groups (subscribed, never pulling again) do not weigh on a pull after a write.
subscribe("idle-a", 100);
const with100 = afterWrites("idle100");
subscribe("idle-b", quick ? 400 : 4_900);
const with5000 = afterWrites("idle5000");

// A query without a limit holds every message of its channel (500 rows): a write to the channel
// is brought into each subscribed group among the changed rows, at a cost that must not grow
// with the rows the group holds.
const UNLIMITED_GROUPS = quick ? 20 : 100;
const channelAll = (channelId) => ({
  table: "message",
  where: {
    type: "simple",
    op: "=",
    left: { type: "column", name: "channelId" },
    right: { type: "literal", value: channelId },
  },
  orderBy: [["at", "asc"]],
});
for (let g = 0; g < UNLIMITED_GROUPS; g++) {
  pull(`u${g}`, [
    { op: "put", hash: "all-c0", name: "channelAll", args: { channel: "c0" }, ast: channelAll("c0") },
  ]);
}
const unlimited = [];
for (let w = 0; w < WRITES; w++) {
  writeMessage(`u-new${w}`, "c0", MESSAGES + 100 + w);
  for (let g = 0; g < UNLIMITED_GROUPS; g++) {
    const start = now();
    const result = pull(`u${g}`, []);
    unlimited.push(ms(start));
    if (result.puts !== 1) throw new Error(`an unlimited query's pull after a write put ${result.puts} rows`);
  }
}
const unlimitedP95 = percentile(unlimited, 0.95);
console.log(
  `unlimited: pull after a write to a 500-row result p50 ${percentile(unlimited, 0.5).toFixed(3)} ms, p95 ${unlimitedP95.toFixed(3)} ms over ${unlimited.length} pulls`,
);

// Groups alike (the unlimited ones: one user, one query, one cookie) share a pull: the first
// group's answer, which the others follow, against each group pulling alone. Per write, the
// time of every group's answer together; writes alternate between the two.
const others = Array.from({ length: UNLIMITED_GROUPS - 1 }, (_, g) => `u${g + 1}`);
const alone = [];
const shared = [];
for (let w = 0; w < 2 * WRITES; w++) {
  writeMessage(`alike${w}`, "c0", MESSAGES + 1_000 + w);
  const start = now();
  if (w % 2 === 0) {
    for (let g = 0; g < UNLIMITED_GROUPS; g++) pull(`u${g}`, []);
    alone.push(ms(start));
    continue;
  }
  const input = { clientGroupID: "u0", userID: "bench", cookie: cookies.get("u0"), queries: { patch: [] } };
  const result = tx(() => engine.pull(adapter, { ...input, followers: others }));
  cookies.set("u0", result.cookie);
  for (const follower of result.followed) cookies.set(follower.clientGroupID, follower.cookie);
  shared.push(ms(start));
  if (result.followed.length !== others.length) throw new Error(`${result.followed.length} groups followed`);
}
const alonePullsMs = percentile(alone, 0.5);
const sharedPullsMs = percentile(shared, 0.5);
console.log(
  `alike: ${UNLIMITED_GROUPS} groups' pulls after a write, median ${alonePullsMs.toFixed(2)} ms each alone, ${sharedPullsMs.toFixed(2)} ms sharing one`,
);

// New groups subscribe while messages are written: after each write (and its channel's
// followers' pulls), ten groups subscribe to five channels each, fifty channels none of which
// another group subscribed to since the write. The groups holding those queries pulled before the
// write, and no change since touched their channels: the new groups copy from them.
const BETWEEN_WRITES = quick ? 10 : 30;
let between = { rows: 0, ms: 0, copied: 0 };
for (let w = 0; w < BETWEEN_WRITES; w++) {
  const channel = `c${(w * 7) % CHANNELS}`;
  writeMessage(`between${w}`, channel, MESSAGES + 2_000 + w);
  followersPull(channel);
  const groups = subscribe(`between${w}-`, 10, w * 10);
  between = {
    rows: between.rows + groups.rows,
    ms: between.ms + groups.ms,
    copied: between.copied + groups.copied,
  };
}
const hydrateBetweenWritesRowsPerSec = Math.round(between.rows / (between.ms / 1000));
console.log(
  `hydration between writes: ${between.rows} rows for ${BETWEEN_WRITES * 10 * QUERIES_PER_GROUP} queries (${between.copied} copied), ${hydrateBetweenWritesRowsPerSec} rows/s`,
);

// One group hydrates every message with its author (a query with a relation and no limit) on
// metered pulls at the default answer time and a work budget no run reaches, until its answer is
// whole: how many pulls, and the longest (a query evaluated whole is one step of all its rows).
const everyMessage = {
  table: "message",
  orderBy: [["id", "asc"]],
  related: [{ correlation: { parentField: ["authorId"], childField: ["id"] }, subquery: { table: "user" } }],
};
const wholePulls = [];
let wholePatch = [{ op: "put", hash: "every", name: "everyMessage", args: {}, ast: everyMessage }];
for (let pulls = 0; pulls < 2_000; pulls++) {
  const input = {
    clientGroupID: "whole",
    userID: "bench",
    cookie: cookies.get("whole") ?? null,
    queries: { patch: wholePatch },
    queryBudgetMs: 600_000,
    answerMs: 50,
  };
  const start = now();
  const result = tx(() => engine.pull(adapter, input));
  wholePulls.push(ms(start));
  cookies.set("whole", result.cookie);
  wholePatch = [];
  if (!result.more) break;
}
const wholeRelatedMaxPullMs = Math.max(...wholePulls);
console.log(
  `every message with its author, one group: ${wholePulls.length} pulls, longest ${wholeRelatedMaxPullMs.toFixed(1)} ms, median ${percentile(wholePulls, 0.5).toFixed(1)} ms`,
);

// One group holds every user with their messages (a one-to-many relation, no limit), hydrated as
// above; then a message is written before each of its pulls: the pull's time (a tree of one-to-many
// relations is brought up to date among the changed rows and the rows below them, not read whole).
const everyUser = {
  table: "user",
  orderBy: [["id", "asc"]],
  related: [
    { correlation: { parentField: ["id"], childField: ["authorId"] }, subquery: { table: "message" } },
  ],
};
const treePull = (patch) =>
  tx(() =>
    engine.pull(adapter, {
      clientGroupID: "tree",
      userID: "bench",
      cookie: cookies.get("tree") ?? null,
      queries: { patch },
      queryBudgetMs: 600_000,
      answerMs: 50,
    }),
  );
let treePatch = [{ op: "put", hash: "users", name: "everyUser", args: {}, ast: everyUser }];
for (let pulls = 0; pulls < 2_000; pulls++) {
  const result = treePull(treePatch);
  cookies.set("tree", result.cookie);
  treePatch = [];
  if (!result.more) break;
}
// The group holding every message with its author (a many-to-one relation) pulls after each
// write too.
const treePulls = [];
const sharedPulls = [];
const timed = (group, samples) => {
  const start = now();
  const result = tx(() =>
    engine.pull(adapter, {
      clientGroupID: group,
      userID: "bench",
      cookie: cookies.get(group) ?? null,
      queries: { patch: [] },
      queryBudgetMs: 600_000,
      answerMs: 50,
    }),
  );
  samples.push(ms(start));
  cookies.set(group, result.cookie);
};
for (let w = 0; w < 20; w++) {
  writeMessage(`tree${w}`, `c${(w * 37) % CHANNELS}`, MESSAGES + 1_000 + w);
  timed("tree", treePulls);
  timed("whole", sharedPulls);
}
const treeAfterWriteP50Ms = percentile(treePulls, 0.5);
const manyToOneAfterWriteP50Ms = percentile(sharedPulls, 0.5);
console.log(
  `every user with their messages, one group, a pull after each write: median ${treeAfterWriteP50Ms.toFixed(1)} ms, longest ${Math.max(...treePulls).toFixed(1)} ms`,
);
console.log(
  `every message with its author, the same: median ${manyToOneAfterWriteP50Ms.toFixed(1)} ms, longest ${Math.max(...sharedPulls).toFixed(1)} ms`,
);

db.close();
rmSync(dir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    messages: MESSAGES,
    channels: CHANNELS,
    groups: GROUPS,
    queriesPerGroup: QUERIES_PER_GROUP,
    hydrateRowsPerSec,
    hydrateUnsharedRowsPerSec,
    hydrateBetweenWritesRowsPerSec,
    pullAfterWriteP50Ms: round(base.p50),
    pullAfterWriteP95Ms: round(base.p95),
    idleQueryPullMicros,
    idleGroups100PullAfterWriteP95Ms: round(with100.p95),
    idleGroups5000PullAfterWriteP95Ms: round(with5000.p95),
    unlimitedPullAfterWriteP95Ms: round(unlimitedP95),
    alikeGroupsPullsAloneMs: round(alonePullsMs),
    alikeGroupsPullsSharedMs: round(sharedPullsMs),
    wholeRelatedPulls: wholePulls.length,
    wholeRelatedMaxPullMs: round(wholeRelatedMaxPullMs),
    treeAfterWriteP50Ms: round(treeAfterWriteP50Ms),
    manyToOneAfterWriteP50Ms: round(manyToOneAfterWriteP50Ms),
  }),
);
