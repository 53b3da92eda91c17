// Sending a group's pull answers to its connections as pokes. All of a group's connections end
// each poke at one cookie: the engine keeps the group's membership at one version, and a poke's
// `baseCookie` must be the cookie its client is at.
import type { ZeroConnection } from "./zero-connection.js";
import { nextZeroCookie, type ZeroCookie } from "./zero-cookie.js";
import type { ZeroGroup, ZeroPokePart } from "./zero-group.js";
import { pokeParts, type QueryPullAnswer } from "./zero-poke.js";

/** Sends the group's answer to each of its connections as one poke (none if it changes nothing). */
export function deliver(
  group: ZeroGroup,
  connections: readonly ZeroConnection[],
  answer: QueryPullAnswer,
  full: boolean,
): void {
  const reset = full || answer.rowsPatch?.[0]?.op === "clear";
  const moved = group.cookie === null || answer.cookie > group.cookie.version;
  const parts = pokeParts(answer, reset, moved, group.got, group.takeContent(reset || group.behind));
  group.reset = false;
  group.behind = false;
  if (parts === null) return;
  const cookie = finalCookie(group.cookie, connections, answer.cookie);
  keepLastPoke(group, reset ? null : parts, cookie);
  group.cookie = cookie;
  for (const connection of connections) connection.sendPoke(parts, cookie);
}

/** Row ops past which a poke is not kept for a replay (a reset costs about as much). */
const MAX_KEPT_ROW_OPS = 1_000;

function keepLastPoke(group: ZeroGroup, parts: ZeroPokePart[] | null, to: ZeroCookie): void {
  const rows = (parts ?? []).reduce((n, part) => n + (part.rowsPatch?.length ?? 0), 0);
  group.lastPoke =
    parts !== null && group.cookie !== null && rows <= MAX_KEPT_ROW_OPS
      ? { from: group.cookie, parts, to }
      : null;
}

/**
 * Sends the group's last poke again to the connections at the cookie it started from (a client
 * whose socket dropped while it went out, back with the cookie it had), so they are at the
 * group's cookie without a reset. Answers the connections still behind it.
 */
export function replayLastPoke(group: ZeroGroup, lagging: readonly ZeroConnection[]): ZeroConnection[] {
  const last = group.lastPoke;
  if (last === null || group.cookie === null || !sameCookie(last.to, group.cookie)) return [...lagging];
  const behind: ZeroConnection[] = [];
  for (const connection of lagging) {
    if (sameCookie(connection.cookie, last.from)) connection.sendPoke(last.parts, last.to);
    else behind.push(connection);
  }
  return behind;
}

/**
 * Some of the group's connections are at its cookie and some behind it (a client back after
 * missing pokes): the first get the group's incremental answer, the others a full one (`clear`,
 * then every row), and all end at the same cookie. So a tab coming back resets only itself.
 */
export function deliverSplit(
  group: ZeroGroup,
  current: readonly ZeroConnection[],
  answer: QueryPullAnswer,
  lagging: readonly ZeroConnection[],
  whole: QueryPullAnswer,
): void {
  // Always poked, even empty: the cookie all end at may be past the current connections' own.
  const incremental = pokeParts(answer, false, true, group.got, group.takeContent(false))!;
  const reset = pokeParts(whole, true, true, group.got, group.takeContent(true))!;
  group.reset = false;
  let cookie = finalCookie(group.cookie, current, answer.cookie);
  const behind = finalCookie(cookie, lagging, whole.cookie);
  if (laterCookie(behind, cookie)) cookie = behind;
  keepLastPoke(group, incremental, cookie);
  group.cookie = cookie;
  for (const connection of current) connection.sendPoke(incremental, cookie);
  for (const connection of lagging) connection.sendPoke(reset, cookie);
}

/** The cookie after a poke to `version`: past the group's and past every connection's own. */
function finalCookie(
  base: ZeroCookie | null,
  connections: readonly ZeroConnection[],
  version: number,
): ZeroCookie {
  let cookie = nextZeroCookie(base, version);
  for (const connection of connections) {
    const next = nextZeroCookie(connection.cookie, version);
    if (laterCookie(next, cookie)) cookie = next;
  }
  return cookie;
}

/** The cookie all the connections are at, or null when they are at different ones (or none). */
export function commonCookie(connections: readonly ZeroConnection[]): ZeroCookie | null {
  const first = connections[0]?.cookie ?? null;
  return connections.every((c) => sameCookie(c.cookie, first)) ? first : null;
}

export function laterCookie(a: ZeroCookie, b: ZeroCookie): boolean {
  return a.version > b.version || (a.version === b.version && a.step > b.step);
}

export function sameCookie(a: ZeroCookie | null, b: ZeroCookie | null): boolean {
  return a !== null && b !== null && a.version === b.version && a.step === b.step;
}
