import { describe, expect, it } from "vitest";
import { IncomingHeaders } from "./http-bridge.js";

describe("IncomingHeaders", () => {
  const incoming = {
    "content-type": "application/json",
    authorization: "Bearer t",
    "set-cookie": ["a=1", "b=2"],
    "x-empty": "",
  };
  const headers = new IncomingHeaders(incoming) as unknown as Headers;

  it("reads like a standard Headers: any case, lists joined, absent is null", () => {
    const standard = new Headers();
    for (const [name, value] of Object.entries(incoming))
      for (const one of [value].flat()) standard.append(name, one);
    for (const name of ["Content-Type", "AUTHORIZATION", "set-cookie", "x-empty", "x-missing"]) {
      expect(headers.get(name)).toBe(standard.get(name));
      expect(headers.has(name)).toBe(standard.has(name));
    }
    expect(headers.getSetCookie()).toEqual(["a=1", "b=2"]);
  });

  it("iterates sorted, and a Request can be built from it", () => {
    expect([...headers].map(([name]) => name)).toEqual([
      "authorization",
      "content-type",
      "set-cookie",
      "x-empty",
    ]);
    const seen: string[] = [];
    headers.forEach((value, name) => {
      seen.push(`${name}=${value}`);
    });
    expect(seen[0]).toBe("authorization=Bearer t");
    expect(new Request("http://localhost/", { headers }).headers.get("authorization")).toBe("Bearer t");
  });

  it("refuses changes, as a request's headers do", () => {
    expect(() => headers.set("x", "1")).toThrow(TypeError);
    expect(() => headers.append("x", "1")).toThrow(TypeError);
    expect(() => headers.delete("authorization")).toThrow(TypeError);
    expect(headers.get("authorization")).toBe("Bearer t");
  });
});
