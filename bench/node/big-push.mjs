// One push of the largest batch the protocol allows (10,000 mutations), as a client that queued
// that many offline sends it: how long it takes and how much memory the server needs for it.
import { readFileSync } from "node:fs";

export const BIG_PUSH_MUTATIONS = 10_000;
const SAMPLE_MS = 2;

/** Resident memory now and at its peak so far (kB), from /proc; null where there is none. */
function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (name) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)?.[1]);
    return { rss: kb("VmRSS"), peak: kb("VmHWM") };
  } catch {
    return null;
  }
}

/**
 * Pushes the batch to `nsUrl` (a namespace of its own) and answers `{ status, ms, peakRssMB,
 * rssGrowthMB }`: the server's resident memory at its highest during the push (the kernel's
 * high-water mark when the push raised it, else the highest of samples every 2 ms), and how far
 * that is above where it was before.
 */
export async function measureBigPush(nsUrl, pid) {
  const now = Date.now();
  const body = JSON.stringify({
    clientGroupID: "big-push-group",
    pushVersion: 1,
    mutations: Array.from({ length: BIG_PUSH_MUTATIONS }, (_, i) => ({
      type: "custom",
      id: i + 1,
      clientID: "big-push-client",
      name: "benchPut",
      args: [{ id: `big-${i}`, value: i }],
      timestamp: now,
    })),
  });
  const before = memoryOf(pid);
  let sampled = before?.rss ?? 0;
  const sampler = setInterval(() => {
    const current = memoryOf(pid);
    if (current) sampled = Math.max(sampled, current.rss);
  }, SAMPLE_MS);
  const started = performance.now();
  const response = await fetch(`${nsUrl}/push`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "bench" },
    body,
  });
  await response.arrayBuffer();
  const ms = performance.now() - started;
  clearInterval(sampler);
  const after = memoryOf(pid);
  if (!before || !after)
    return { status: response.status, ms: Math.round(ms), peakRssMB: null, rssGrowthMB: null };
  const peakKb = after.peak > before.peak ? after.peak : sampled;
  return {
    status: response.status,
    ms: Math.round(ms),
    peakRssMB: Math.round(peakKb / 1024),
    rssGrowthMB: Math.round((peakKb - before.rss) / 1024),
  };
}
