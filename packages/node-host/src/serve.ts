import { createServer, type ListenOptions, type NodeHostOptions, type WeirServer } from "./create-server.js";
import { DEFAULT_PORT, portFromEnv } from "./listen-port.js";
import { untilStopped } from "./until-stopped.js";

/**
 * Creates and starts a server, prints `weir listening on <url>`, and shuts down gracefully on
 * SIGTERM or SIGINT (stop accepting, finish in-flight requests, close databases, then exit; a
 * second signal exits at once).
 */
export async function serve(options: NodeHostOptions & ListenOptions): Promise<WeirServer & { url: string }> {
  const port = options.port ?? portFromEnv() ?? DEFAULT_PORT;
  const server = createServer(options);
  const { url } = await server.listen({ port, ...(options.host ? { host: options.host } : {}) });
  console.log(`weir listening on ${url}`);
  untilStopped(server, (line) => console.log(line)).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error("weir: shutdown failed", error);
      process.exit(1);
    },
  );
  return Object.assign(server, { url });
}
