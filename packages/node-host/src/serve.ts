import { createServer, type ListenOptions, type NodeHostOptions, type WeirServer } from "./create-server.js";

const DEFAULT_PORT = 4848;

/**
 * Creates and starts a server, prints `weir listening on <url>`, and shuts down gracefully on
 * SIGTERM or SIGINT (stop accepting, finish in-flight requests, close databases, then exit).
 */
export async function serve(options: NodeHostOptions & ListenOptions): Promise<WeirServer & { url: string }> {
  const port = options.port ?? portFromEnv() ?? DEFAULT_PORT;
  const server = createServer(options);
  const { url } = await server.listen({ port, ...(options.host ? { host: options.host } : {}) });
  console.log(`weir listening on ${url}`);
  const shutdown = (signal: NodeJS.Signals) => {
    process.off("SIGTERM", shutdown);
    process.off("SIGINT", shutdown);
    console.log(`weir: ${signal} received, shutting down`);
    server.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error("weir: shutdown failed", error);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  return Object.assign(server, { url });
}

function portFromEnv(): number | undefined {
  const text = process.env.PORT;
  if (text === undefined || text === "") return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error(`PORT must be a port number (0 to 65535), not ${JSON.stringify(text)}`);
  }
  return port;
}
