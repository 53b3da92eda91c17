import {
  authorizeNamespace,
  CLOSE_PROTOCOL_ERROR,
  type Claims,
  HttpError,
  type Logger,
  parseZeroConnect,
  type ResolvedConfig,
  type WeirConfig,
  ZeroError,
  zeroRefusal,
} from "@weir/host-core";
import { authenticateAtEdge } from "./edge-auth.js";

/**
 * The Worker's check of `GET /<ns>/sync/v<N>/connect`: the connect request as host-core reads it,
 * and the credential Zero's client sends in its Sec-WebSocket-Protocol, authenticated and
 * authorized for the namespace here, as every other route is. Answers the claims to forward, or
 * the refusal: a socket the Worker opens itself, sends the Zero `error` on and closes (the client
 * reads refusals only there), so a refused connection never wakes an object.
 */
export async function zeroAtEdge(
  config: WeirConfig,
  resolved: ResolvedConfig,
  request: Request,
  route: { namespace: string; version: number },
  logger: Logger,
): Promise<Claims | Response> {
  if (request.headers.get("upgrade")?.toLowerCase() !== "websocket") {
    throw new HttpError("bad_request", "this route is a WebSocket: send `Upgrade: websocket`");
  }
  const protocol = request.headers.get("sec-websocket-protocol");
  try {
    const connect = parseZeroConnect(route.version, new URL(request.url), protocol);
    const headers = new Headers(request.headers);
    headers.delete("authorization");
    if (connect.authToken) headers.set("authorization", `Bearer ${connect.authToken}`);
    const claims = await authenticateAtEdge(config, new Request(request.url, { headers }), logger);
    await authorizeNamespace(resolved, claims, route.namespace);
    return claims;
  } catch (error) {
    return refusedSocket(protocol, error instanceof ZeroError ? error : zeroRefusal(error));
  }
}

function refusedSocket(protocol: string | null, error: ZeroError): Response {
  const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
  server.accept();
  server.send(error.frame());
  server.close(CLOSE_PROTOCOL_ERROR, error.kind);
  const echoed = protocol?.trim();
  return new Response(null, {
    status: 101,
    webSocket: client,
    headers: echoed ? { "sec-websocket-protocol": echoed } : {},
  });
}
