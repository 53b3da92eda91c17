/**
 * Compares secrets (bearer tokens, keys) in time that does not depend on where they differ: every
 * UTF-16 unit of the longer one is read (one past the end of the shorter reads as 0).
 */
export function safeEqual(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++)
    diff |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0);
  return diff === 0;
}
