import { type ConformanceTarget, conformanceConfig } from "@weir/conformance";
import { createServer, type NodeHostOptions, type WeirServer } from "../src/index.js";
import { memoryLogger, tempDir } from "./helpers.js";

/**
 * A server of the conformance suite's config on a free loopback port: development
 * authentication (the Authorization header is the user), a fresh data directory, a memory
 * logger; `options` on top.
 */
export async function conformanceServer(
  options: Partial<NodeHostOptions> = {},
): Promise<{ server: WeirServer; url: string; target: ConformanceTarget }> {
  const server = createServer({
    ...conformanceConfig(),
    devAuth: true,
    dataDir: tempDir(),
    logger: memoryLogger(),
    ...options,
  });
  const { url } = await server.listen();
  return { server, url, target: { url, auth: (user) => user, close: () => server.close() } };
}
