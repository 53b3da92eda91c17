import { describe, expect, it } from "vitest";
import type { HttpError } from "./http-error.js";
import { matchRoute } from "./route.js";

function refusal(method: string, path: string): HttpError {
  try {
    matchRoute(method, path);
  } catch (error) {
    return error as HttpError;
  }
  throw new Error(`${method} ${path} matched`);
}

describe("matchRoute", () => {
  it("routes both dialects, the wake socket and the admin knobs", () => {
    expect(matchRoute("POST", "/todo/pull")).toEqual({ type: "sync", kind: "pull", namespace: "todo" });
    expect(matchRoute("POST", "/a_b-9/replicache/push")).toMatchObject({
      kind: "replicache_push",
      namespace: "a_b-9",
    });
    expect(matchRoute("GET", "/todo/wake")).toMatchObject({ type: "wake" });
    expect(matchRoute("POST", "/todo/admin/drop-next-push-response")).toMatchObject({
      type: "admin",
      action: "drop-next-push-response",
    });
    expect(matchRoute("GET", "/todo/admin/writer")).toMatchObject({ action: "writer" });
  });

  it("answers 400 for a bad namespace, 404 for no route, 405 with Allow for a wrong method", () => {
    expect(refusal("POST", "/bad.name/pull")).toMatchObject({ status: 400, code: "bad_request" });
    expect(refusal("POST", `/${"x".repeat(65)}/pull`).status).toBe(400);
    expect(refusal("POST", "//pull").status).toBe(400);
    expect(refusal("GET", "/todo").status).toBe(404);
    expect(refusal("GET", "/todo/admin/toString").status).toBe(404);
    expect(refusal("GET", "/todo/pull/extra").status).toBe(404);
    const wrong = refusal("GET", "/todo/push");
    expect(wrong).toMatchObject({ status: 405, headers: { allow: "POST" } });
    expect(refusal("PUT", "/todo/admin/writer").headers.allow).toBe("GET, POST");
  });
});
