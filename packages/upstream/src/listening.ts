import type { Server } from "node:http";

/** Starting and stopping a `node:http` server of this package. */
export interface Listening {
  /** Listens (port 0 picks a free one; host 127.0.0.1 unless given) and answers its base URL. */
  listen(options?: { port?: number; host?: string }): Promise<{ url: string; port: number }>;
  /** Stops accepting and ends open connections. */
  close(): Promise<void>;
}

/** `listen` and `close` for a server: the URL brackets an IPv6 host. */
export function listening(httpServer: Server): Listening {
  return {
    listen({ port = 0, host = "127.0.0.1" } = {}) {
      return new Promise((resolve, reject) => {
        httpServer.once("error", reject);
        httpServer.listen(port, host, () => {
          httpServer.off("error", reject);
          const bound = (httpServer.address() as { port: number }).port;
          resolve({ url: `http://${host.includes(":") ? `[${host}]` : host}:${bound}`, port: bound });
        });
      });
    },
    close() {
      return new Promise((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      });
    },
  };
}
