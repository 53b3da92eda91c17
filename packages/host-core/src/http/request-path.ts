/** A path of plain characters only, which URL parsing would leave exactly as it is. */
const PLAIN_PATH = /^\/[A-Za-z0-9_/-]*$/;

/**
 * The pathname of a request's absolute URL, as `new URL(url).pathname` answers it. Every
 * request asks, and building a URL costs a busy server a share of its time: a path of plain
 * characters (every weir route) is cut out of the string; anything else (percent escapes, dot
 * segments, backslashes) goes through the URL parser.
 */
export function requestPath(url: string): string {
  const authority = url.indexOf("//");
  const start = authority < 0 ? -1 : url.indexOf("/", authority + 2);
  if (start >= 0) {
    let end = url.length;
    const query = url.indexOf("?", start);
    if (query >= 0) end = query;
    const hash = url.indexOf("#", start);
    if (hash >= 0 && hash < end) end = hash;
    const path = url.slice(start, end);
    if (PLAIN_PATH.test(path)) return path;
  }
  return new URL(url).pathname;
}
