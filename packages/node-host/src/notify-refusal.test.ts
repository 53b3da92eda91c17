import { existsSync } from "node:fs";
import { join } from "node:path";
import { CONFORMANCE_NOTIFY_TOKEN, conformanceConfig } from "@weir/conformance";
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { memoryLogger, tempDir } from "../test/helpers.js";
import { createServer } from "./index.js";
import { CATALOG_FILE } from "./namespace-catalog.js";

it("answers notify on a namespace without an upstream 404, creating neither its file nor its catalog entry", async () => {
  const dataDir = tempDir();
  // The suite's upstream serves only `up-` and `dp-` namespaces; the URL is never called here.
  const config = conformanceConfig({ upstreamUrl: "http://127.0.0.1:9" });
  const server = createServer({ ...config, devAuth: true, dataDir, logger: memoryLogger() });
  const { url } = await server.listen();
  try {
    const response = await fetch(`${url}/plain/notify`, {
      method: "POST",
      headers: { authorization: `Bearer ${CONFORMANCE_NOTIFY_TOKEN}` },
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: "not_found" });
  } finally {
    await server.close();
  }
  expect(existsSync(join(dataDir, "plain.sqlite"))).toBe(false);
  const catalogFile = join(dataDir, CATALOG_FILE);
  if (!existsSync(catalogFile)) return;
  const catalog = new Database(catalogFile, { readonly: true });
  try {
    expect(catalog.prepare("SELECT name FROM namespaces").all()).toEqual([]);
  } finally {
    catalog.close();
  }
});
