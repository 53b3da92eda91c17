import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { conformanceConfig, connectZero } from "@weir/conformance";
import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { memoryLogger } from "../test/helpers.js";
import { createServer, type WeirServer } from "./index.js";

const SECRET = "a-shared-secret-of-at-least-32-bytes!";

async function pull(url: string, authorization?: string) {
  const response = await fetch(`${url}/jwt/pull`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
    body: JSON.stringify({ clientGroupID: `g-${Math.random()}`, clientID: "c", cookie: null }),
  });
  return response.status;
}

async function start(
  jwt: { secret: string } | { jwksUrl: string },
): Promise<{ server: WeirServer; url: string; logger: ReturnType<typeof memoryLogger> }> {
  const logger = memoryLogger();
  const server = createServer({ ...conformanceConfig(), jwt, storage: "memory", logger });
  const { url } = await server.listen();
  return { server, url, logger };
}

describe("JWT with an HS256 secret", () => {
  let weir: Awaited<ReturnType<typeof start>>;
  beforeAll(async () => {
    weir = await start({ secret: SECRET });
  });
  afterAll(() => weir.server.close());
  const sign = (claims: Record<string, unknown>, secret = SECRET, expires = "5m") =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: "HS256" })
      .setIssuedAt()
      .setExpirationTime(expires)
      .sign(new TextEncoder().encode(secret));

  it("accepts a valid token, with or without Bearer", async () => {
    const token = await sign({ sub: "alice" });
    expect(await pull(weir.url, `Bearer ${token}`)).toBe(200);
    expect(await pull(weir.url, token)).toBe(200);
  });

  it("refuses a missing, forged, expired or subject-less token with 401", async () => {
    expect(await pull(weir.url)).toBe(401);
    expect(await pull(weir.url, "Bearer not-a-jwt")).toBe(401);
    expect(
      await pull(weir.url, `Bearer ${await sign({ sub: "alice" }, "another-secret-of-at-least-32-bytes")}`),
    ).toBe(401);
    const expired = await new SignJWT({ sub: "alice" })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(new TextEncoder().encode(SECRET));
    expect(await pull(weir.url, `Bearer ${expired}`)).toBe(401);
    expect(await pull(weir.url, `Bearer ${await sign({ name: "no subject" })}`)).toBe(401);
    expect(await pull(weir.url, "alice")).toBe(401);
  });

  it("answers a Zero updateAuth with a forged, expired or wrong-secret token Unauthorized, logging no error", async () => {
    const expired = await new SignJWT({ sub: "alice" })
      .setProtectedHeader({ alg: "HS256" })
      .setExpirationTime(Math.floor(Date.now() / 1000) - 60)
      .sign(new TextEncoder().encode(SECRET));
    const wrongSecret = await sign({ sub: "alice" }, "another-secret-of-at-least-32-bytes");
    for (const token of ["forged", expired, wrongSecret]) {
      const socket = await connectZero(weir.url, "jwt", { user: await sign({ sub: "alice" }) });
      await socket.next("pokeEnd");
      socket.ws.send(JSON.stringify(["updateAuth", { auth: token }]));
      expect(await socket.next("error")).toMatchObject({ kind: "Unauthorized", origin: "zeroCache" });
      expect((await socket.closed).code).toBe(1002);
    }
    expect(weir.logger.lines.filter((line) => line.level === "error")).toEqual([]);
  });

  it("takes the token from ?auth= on the wake socket only, where a browser cannot set headers", async () => {
    const token = await sign({ sub: "alice" });
    const wakeUrl = (auth: string) => `${weir.url.replace("http", "ws")}/jwt/wake?clientID=c1&auth=${auth}`;
    const connect = (url: string) =>
      new Promise<number>((resolve) => {
        const socket = new WebSocket(url);
        socket.on("open", () => {
          socket.close();
          resolve(101);
        });
        socket.on("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0));
        socket.on("error", () => resolve(0));
      });
    expect(await connect(wakeUrl(token))).toBe(101);
    expect(await connect(wakeUrl("forged"))).toBe(401);
    const response = await fetch(`${weir.url}/jwt/pull?auth=${token}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ clientGroupID: "g-query", clientID: "c", cookie: null }),
    });
    expect(response.status).toBe(401);
  });
});

describe("JWT with a JWKS URL", () => {
  let jwks: Server;
  let weir: { server: WeirServer; url: string };
  let privateKey: CryptoKey;
  let otherKey: CryptoKey;
  beforeAll(async () => {
    const pair = await generateKeyPair("RS256");
    privateKey = pair.privateKey;
    otherKey = (await generateKeyPair("RS256")).privateKey;
    const jwk: JWK = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
    jwks = createHttpServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((resolve) => jwks.listen(0, "127.0.0.1", resolve));
    const { port } = jwks.address() as AddressInfo;
    weir = await start({ jwksUrl: `http://127.0.0.1:${port}/.well-known/jwks.json` });
  });
  afterAll(async () => {
    await weir.server.close();
    await new Promise((resolve) => jwks.close(resolve));
  });
  const sign = (key: CryptoKey) =>
    new SignJWT({ sub: "bob" })
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .setExpirationTime("5m")
      .sign(key);

  it("accepts a token signed by a key of the set", async () => {
    expect(await pull(weir.url, `Bearer ${await sign(privateKey)}`)).toBe(200);
  });

  it("refuses a token signed by another key", async () => {
    expect(await pull(weir.url, `Bearer ${await sign(otherKey)}`)).toBe(401);
  });
});
