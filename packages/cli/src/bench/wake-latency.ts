import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import WebSocket from "ws";
import type { BenchContext } from "./bench-context.js";
import { LatencyRecorder, type LatencySummary } from "./latency-recorder.js";
import { ProgressLine } from "./progress-line.js";

export interface WakeLatencyResult {
  mode: "wake";
  sockets: number;
  rounds: number;
  /** From the push's acknowledgement to `wake` on each socket (0 when the wake came first). */
  latency: LatencySummary;
  /** From sending the push to `wake` on each socket: covers a wake sent before the acknowledgement. */
  sincePushSent: LatencySummary;
  /** Socket-rounds where no wake arrived within the round's timeout. */
  missed: number;
}

const ROUND_TIMEOUT_MS = 2_000;
/** Lets stray or coalesced wakes of one round land before the next one starts. */
const SETTLE_MS = 100;
const OPEN_BATCH = 50;

/**
 * Opens K wake sockets, then, round after round, pushes one mutation from a client that has no
 * socket and times each socket's `wake` against the push's acknowledgement.
 */
export async function runWakeLatency(ctx: BenchContext): Promise<WakeLatencyResult> {
  const { sockets: count, rounds, mutator, args } = ctx.options;
  const wakeUrl = new URL(`${ctx.url.pathname}/wake`, ctx.url);
  wakeUrl.protocol = ctx.url.protocol === "https:" ? "wss:" : "ws:";
  const sockets: WebSocket[] = [];
  let receivedAt: (number | undefined)[] = [];
  let roundOpen = false;
  let pending = 0;
  let allArrived: () => void = () => {};
  const recorder = new LatencyRecorder();
  const sinceSent = new LatencyRecorder();
  let missed = 0;
  let round = 0;
  const progress = new ProgressLine(
    ctx.progressStream,
    () =>
      `wake  ${sockets.length} sockets  round ${round}/${rounds}  p95 ${recorder.count ? recorder.percentile(95).toFixed(2) : "-"} ms`,
  ).start();
  const target = ctx.target();
  try {
    for (let opened = 0; opened < count; opened += OPEN_BATCH) {
      const batch = Array.from({ length: Math.min(OPEN_BATCH, count - opened) }, (_, j) => {
        const index = opened + j;
        const url = new URL(wakeUrl);
        url.searchParams.set("clientID", `${ctx.runID}-w${index}`);
        const socket = new WebSocket(url, { headers: { authorization: ctx.options.auth } });
        socket.on("message", (data) => {
          if (!roundOpen || receivedAt[index] !== undefined || data.toString() !== "wake") return;
          receivedAt[index] = performance.now();
          if (--pending === 0) allArrived();
        });
        sockets.push(socket);
        // A socket that fails after opening just stops hearing wakes: the round counts it as missed.
        socket.on("error", () => {});
        return new Promise<void>((resolve, reject) => {
          socket.once("open", () => resolve());
          socket.once("error", reject);
          socket.once("unexpected-response", (_request, response) => {
            // The refusal's own words (a user's socket cap names itself), cut short.
            let body = "";
            response.on("data", (chunk: Buffer) => {
              body += chunk.toString();
            });
            response.on("end", () =>
              reject(
                new Error(
                  `wake socket ${index + 1} refused with HTTP ${response.statusCode}${body ? `: ${body.slice(0, 300)}` : ""}`,
                ),
              ),
            );
          });
        });
      });
      await Promise.all(batch);
    }
    const clientID = `${ctx.runID}-waker`;
    for (round = 1; round <= rounds; round++) {
      receivedAt = new Array(count).fill(undefined);
      pending = count;
      const arrived = new Promise<void>((resolve) => {
        allArrived = resolve;
      });
      roundOpen = true;
      const sentAt = performance.now();
      await target.push(`${ctx.runID}-wakegroup`, [
        { clientID, id: round, name: mutator, args: args(`${clientID}-${round}`, round) },
      ]);
      const ackedAt = performance.now();
      await Promise.race([arrived, sleep(ROUND_TIMEOUT_MS)]);
      roundOpen = false;
      for (const at of receivedAt) {
        if (at === undefined) missed++;
        else {
          recorder.record(Math.max(0, at - ackedAt));
          sinceSent.record(at - sentAt);
        }
      }
      await sleep(SETTLE_MS);
    }
    round = rounds;
  } finally {
    progress.stop();
    for (const socket of sockets) socket.terminate();
    await target.close();
  }
  return {
    mode: "wake",
    sockets: count,
    rounds,
    latency: recorder.summary(),
    sincePushSent: sinceSent.summary(),
    missed,
  };
}
