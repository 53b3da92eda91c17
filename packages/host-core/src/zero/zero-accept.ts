import type { Claims } from "../auth/claims.js";
import type { AuthRequest, RequestParts } from "../http/http-parts.js";
import { parseZeroConnect, type ZeroConnectRequest } from "./zero-connect-request.js";
import { ZeroError } from "./zero-error.js";
import type { ZeroHub } from "./zero-hub.js";
import { zeroRefusal } from "./zero-refusal.js";
import { CLOSE_PROTOCOL_ERROR, type ZeroSocket } from "./zero-socket.js";
import type { ZeroUpgrade } from "./zero-upgrade.js";

/** What accepting a Zero connection needs of the host. */
export interface ZeroAcceptHost {
  /** The claims of the request's credential (a rejection refuses it). */
  authenticate(request: AuthRequest): Promise<Claims>;
  /** The namespace's hub, opening the namespace for these claims. */
  hub(claims: Claims): Promise<ZeroHub>;
}

/**
 * The upgrade that answers `GET /<ns>/sync/v<N>/connect`. The credential is the client's `auth`
 * (the `authToken` of its Sec-WebSocket-Protocol), given to `authenticate` as a bearer
 * Authorization header. Refusals go to the client as Zero `error` messages on the socket, those
 * of the namespace (its quota, its state) included.
 */
export async function acceptZero(
  version: number,
  request: RequestParts,
  host: ZeroAcceptHost,
): Promise<ZeroUpgrade> {
  const protocolHeader = request.headers.get("sec-websocket-protocol");
  let connect: ZeroConnectRequest;
  let claims: Claims;
  try {
    connect = parseZeroConnect(version, new URL(request.url), protocolHeader);
    // The request's own headers, but for a credential, which a Zero client sends only as its token.
    const headers = new Headers(request.headers);
    headers.delete("authorization");
    if (connect.authToken) headers.set("authorization", `Bearer ${connect.authToken}`);
    claims = await host
      .authenticate({ method: "GET", url: request.url, headers })
      .catch((error: unknown) => Promise.reject(zeroRefusal(error)));
  } catch (error) {
    return refused(protocolHeader, error instanceof ZeroError ? error : zeroRefusal(error));
  }
  let hub: ZeroHub;
  try {
    hub = await host.hub(claims);
  } catch (error) {
    // A namespace the user may not create now (its quota), or one that cannot open, is refused
    // on the socket too: the client reads refusals only there.
    return refused(protocolHeader, zeroRefusal(error));
  }
  return {
    protocol: connect.protocol,
    userID: claims.userID,
    open: async (socket) => {
      try {
        return hub.connect(connect, claims, socket);
      } catch (error) {
        if (!(error instanceof ZeroError)) throw error;
        refuse(socket, error);
        return null;
      }
    },
  };
}

/**
 * An upgrade the host refuses itself after host-core accepted it (a cap of its own): `error`, a
 * refusal of the HTTP flows' shape (`status`, `message`), reaches the client as its Zero error.
 */
export function refusedZeroUpgrade(protocol: string | null, error: unknown): ZeroUpgrade {
  return refused(protocol, zeroRefusal(error));
}

function refused(protocol: string | null, error: ZeroError): ZeroUpgrade {
  return {
    protocol: protocol?.trim() || null,
    userID: null,
    open: async (socket) => {
      refuse(socket, error);
      return null;
    },
  };
}

function refuse(socket: ZeroSocket, error: ZeroError): void {
  socket.send(error.frame());
  socket.close(CLOSE_PROTOCOL_ERROR, error.kind);
}
