/**
 * Zero's cookies are strings the client compares lexicographically, and a poke that changes
 * anything must carry a greater cookie than the one it starts from. weir's version alone cannot
 * be that cookie: a query added without any new commit changes the client's rows at the same
 * version. So a Zero cookie is the version and a step within it, both zero-padded to a fixed
 * width, so that string order is numeric order.
 */
export interface ZeroCookie {
  readonly version: number;
  readonly step: number;
}

const VERSION_WIDTH = 16;
const STEP_WIDTH = 8;
const PATTERN = /^([0-9]{16})\.([0-9]{8})$/;

export function formatZeroCookie(cookie: ZeroCookie): string {
  return `${String(cookie.version).padStart(VERSION_WIDTH, "0")}.${String(cookie.step).padStart(STEP_WIDTH, "0")}`;
}

/** The cookie a client sent, or null when it is not one weir hands out. */
export function parseZeroCookie(text: string): ZeroCookie | null {
  const match = PATTERN.exec(text);
  if (!match) return null;
  const version = Number(match[1]);
  const step = Number(match[2]);
  if (!Number.isSafeInteger(version)) return null;
  return { version, step };
}

/** The cookie after a poke from `base` (null: the client has nothing) that brought it to `version`. */
export function nextZeroCookie(base: ZeroCookie | null, version: number): ZeroCookie {
  if (base === null || version > base.version) return { version, step: 0 };
  return { version: base.version, step: base.step + 1 };
}
