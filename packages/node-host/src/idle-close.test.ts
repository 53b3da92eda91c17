import { conformanceConfig } from "@weir/conformance";
import { expect, it } from "vitest";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer } from "./index.js";

const IDLE_MS = 1_000;

const openNamespaces = async (url: string) => {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^weir_open_namespaces (\d+)$/m.exec(text)?.[1]);
};

it("closes a namespace idleCloseMs after its last request, not up to half as long again", async () => {
  const server = createServer({
    ...conformanceConfig(),
    devAuth: true,
    dataDir: tempDir(),
    idleCloseMs: IDLE_MS,
    logger: memoryLogger(),
  });
  const { url } = await server.listen();
  try {
    const response = await fetch(`${url}/idle/pull`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: "alice" },
      body: JSON.stringify({ clientGroupID: "g", clientID: "c", cookie: null }),
    });
    expect(response.status).toBe(200);
    const used = performance.now();
    expect(await openNamespaces(url)).toBe(1);
    // Closed within a quarter of idleMs of its time (the sweep runs every twentieth).
    await new Promise((resolve) => setTimeout(resolve, IDLE_MS + IDLE_MS / 4 - (performance.now() - used)));
    expect(await openNamespaces(url)).toBe(0);
  } finally {
    await server.close();
  }
});
