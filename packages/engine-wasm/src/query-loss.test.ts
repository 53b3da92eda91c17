import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ClientRows, channelMessages, chatSchema } from "../test/chat.js";
import { DATABASES, testEngine } from "../test/databases.js";
import { Namespace } from "../test/fixtures.js";
import type { QueryPatchOp } from "./types.js";

// A lossy link: query-aware answers cut by small caps, some of them lost on the way back. A
// client that lost a part pulls again from the cookie of the last part it got and resumes there,
// so every group converges after at most as many delivered answers as its rows need at the cap
// (each row reaches it once), whatever was lost, and the bytes sent stay within a small multiple
// of its rows'.
const put: QueryPatchOp = {
  op: "put",
  hash: "h",
  name: "channel",
  args: ["c1"],
  ast: channelMessages("c1", 100),
};

/** At most 3 of every 10 answers lost: the pattern repeats every 10 pulls. */
const LOSS_WINDOW = 10;
const LOSSES = fc
  .array(fc.boolean(), { minLength: LOSS_WINDOW, maxLength: LOSS_WINDOW })
  .filter((lost) => lost.filter(Boolean).length <= 3);

const bytes = (text: string) => Buffer.byteLength(text, "utf8");

describe.each(DATABASES)("query-aware pull over a lossy link on $kind", ({ open }) => {
  it("converges, each row delivered once, within a bounded number of pulls and bytes", async () => {
    const engine = await testEngine();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 40 }),
        fc.constantFrom(1, 2, 3, 5),
        LOSSES,
        async (messages, cap, losses) => {
          const ns = new Namespace(engine, open(), chatSchema);
          ns.sql("INSERT INTO user VALUES ('u1', 'Ann'), ('u2', 'Bo')");
          for (let i = 0; i < messages; i++) {
            ns.sql("INSERT INTO message VALUES (?, 'c1', ?, ?, 't')", [`m${i}`, `u${(i % 2) + 1}`, i]);
          }
          // The rows and their bytes, as one uncapped answer to a group of its own sends them.
          const whole = ns.pull({ cookie: null, clientGroupID: "fresh", queries: { patch: [put] } });
          const rows = whole.json.rowsPatch!.filter((op) => op.op === "put");
          const rowBytes = rows.map((op) => bytes(JSON.stringify(op)));
          const rowsBytes = rowBytes.reduce((a, b) => a + b, 0);
          const parts = Math.ceil(rows.length / cap);

          const client = new ClientRows();
          let pulls = 0;
          let delivered = 0;
          let sentBytes = 0;
          let deliveredRows = 0;
          let confirmed = false;
          for (; pulls < 1000; pulls++) {
            // The query's put goes with every pull until an answer arrives (a put again is no change).
            const answer = ns.pull({
              cookie: client.cookie,
              clientGroupID: "g",
              queries: { patch: delivered === 0 ? [put] : [] },
              maxChangeRows: cap,
            });
            const ops = answer.json.rowsPatch ?? [];
            for (const op of ops) if (op.op !== "clear") sentBytes += bytes(JSON.stringify(op));
            if (losses[pulls % LOSS_WINDOW]) continue;
            delivered++;
            deliveredRows += ops.filter((op) => op.op !== "clear").length;
            client.apply(answer.json as never, chatSchema);
            if (!answer.more) {
              confirmed = true;
              break;
            }
          }
          expect(confirmed).toBe(true);
          pulls++;
          expect(client.keys()).toEqual(
            rows.map((op) => `${op.tableName}/${JSON.stringify([op.value!.id])}`).sort(),
          );
          expect(ns.pull({ cookie: client.cookie, clientGroupID: "g", maxChangeRows: cap }).unchanged).toBe(
            true,
          );
          // Progress never goes back: each row is delivered once, a cap's worth per answer.
          expect(deliveredRows).toBe(rows.length);
          expect(delivered).toBe(parts);
          // At most 3 of every 10 pulls are lost.
          expect(pulls).toBeLessThanOrEqual(Math.ceil(parts / 7) * LOSS_WINDOW);
          // Besides the rows once, only what the lost answers carried: a cap's worth each, at
          // most 3 a window.
          const largest = Math.max(...rowBytes) * cap;
          expect(sentBytes).toBeLessThanOrEqual(rowsBytes + 3 * Math.ceil(parts / 7) * largest);
        },
      ),
      { numRuns: 25 },
    );
  }, 120_000);
});
