import { createUpstreamServer, type UpstreamServer } from "@weir/upstream";
import type { PostgresUpstream } from "./postgres-upstream.js";

/**
 * The upstream contract over HTTP for every namespace a PostgreSQL upstream serves
 * (`/<namespace>/changes`, `/<namespace>/snapshot`), with its status and metrics at `/status` and
 * `/metrics`, all behind the bearer token when one is given.
 */
export function serveUpstream(upstream: PostgresUpstream, options: { token?: string } = {}): UpstreamServer {
  return createUpstreamServer({
    source: (namespace) => upstream.source(namespace),
    ...(options.token === undefined ? {} : { token: options.token }),
    operations: { status: () => upstream.status(), metrics: upstream.metrics },
  });
}
