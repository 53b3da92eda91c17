// UTF-8 cannot carry a lone UTF-16 surrogate, but a JSON escape can (`"\ud800"`). SQLite stores
// one as U+FFFD, so a client would read back another string than it wrote, and two strings it
// kept apart could become one key. Every way a value comes in (an HTTP body, a Zero push) is
// checked by this one rule.

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The refusal of a value with a lone surrogate at `at` (a path into it). */
export function loneSurrogateMessage(at: string): string {
  return `${at}: a string holds a lone UTF-16 surrogate, which cannot be stored; send well-formed Unicode`;
}

/** Where in a parsed value (itself at `path`) a string or a key holds a lone surrogate, or null. */
export function loneSurrogatePath(value: unknown, path: string): string | null {
  if (typeof value === "string") return LONE_SURROGATE.test(value) ? path : null;
  if (typeof value !== "object" || value === null) return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = loneSurrogatePath(value[i], `${path}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (LONE_SURROGATE.test(key)) return at;
    const found = loneSurrogatePath(item, at);
    if (found !== null) return found;
  }
  return null;
}
