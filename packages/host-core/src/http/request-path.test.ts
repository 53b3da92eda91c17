import { describe, expect, it } from "vitest";
import { requestPath } from "./request-path.js";

describe("requestPath", () => {
  it("answers what the URL parser answers, for plain paths and every other kind", () => {
    const urls = [
      "http://localhost/todo/replicache/push",
      "http://localhost/todo/pull?x=1",
      "http://localhost/todo/wake?clientID=a#frag",
      "http://localhost/todo/admin/status#x?y",
      "http://localhost",
      "http://localhost/",
      "http://localhost//double/slash",
      "http://localhost/a/../b/push",
      "http://localhost/a/./push",
      "http://localhost/%61dmin/push",
      "http://localhost/sp ace/push",
      "http://localhost/back\\slash",
      "http://user:pw@example.com:8080/ns/push?q",
      "https://example.com/ns/ü/push",
    ];
    for (const url of urls) expect(requestPath(url), url).toBe(new URL(url).pathname);
  });
});
