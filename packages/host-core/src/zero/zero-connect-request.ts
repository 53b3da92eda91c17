import { IdString, parse, ZERO_PROTOCOL_VERSIONS, ZeroInitConnectionBody } from "@weir/protocol";
import * as v from "valibot";
import { ZeroError } from "./zero-error.js";

/** What a client's connect request says: its URL's parameters and its Sec-WebSocket-Protocol. */
export interface ZeroConnectRequest {
  clientID: string;
  clientGroupID: string;
  /** The cookie the client's copy is at (null: it has nothing). */
  baseCookie: string | null;
  /** The client's last mutation id the server confirmed, as the client knows it. */
  lmid: number;
  wsid: string;
  /** The first message, when the client put it in the protocol header. */
  init: ZeroInitConnectionBody | null;
  /** The client's `auth` option, the credential its connection is authenticated with. */
  authToken: string | null;
  /** The Sec-WebSocket-Protocol value, which the answer must echo; null when it sent none. */
  protocol: string | null;
}

const SecProtocol = v.object({
  initConnectionMessage: v.optional(v.tuple([v.literal("initConnection"), ZeroInitConnectionBody])),
  authToken: v.optional(v.string()),
});

/**
 * The connect request of `GET /<ns>/sync/v<N>/connect`, or the ZeroError that refuses it: an
 * unsupported version, a missing id, or a protocol header that is not Zero's encoding.
 */
export function parseZeroConnect(
  version: number,
  url: URL,
  protocolHeader: string | null,
): ZeroConnectRequest {
  if (!ZERO_PROTOCOL_VERSIONS.includes(version)) {
    throw new ZeroError(
      "VersionNotSupported",
      `sync protocol v${version} is not supported: this server speaks v${ZERO_PROTOCOL_VERSIONS.join(", v")}`,
    );
  }
  const params = url.searchParams;
  const id = (name: string): string => {
    const checked = parse(IdString, params.get(name) ?? "");
    if (!checked.ok) throw new ZeroError("InvalidConnectionRequest", `${name}: ${checked.message}`);
    return checked.value;
  };
  const clientID = id("clientID");
  const clientGroupID = id("clientGroupID");
  const lmidText = params.get("lmid") ?? "0";
  const lmid = /^(0|[1-9][0-9]{0,15})$/.test(lmidText) ? Number(lmidText) : Number.NaN;
  if (!Number.isSafeInteger(lmid)) {
    throw new ZeroError("InvalidConnectionRequest", "lmid: a non-negative integer");
  }
  const baseCookie = params.get("baseCookie") || null;
  const protocol = protocolHeader?.trim() || null;
  const decoded = protocol === null ? {} : decodeProtocol(protocol);
  return {
    clientID,
    clientGroupID,
    baseCookie,
    lmid,
    wsid: (params.get("wsid") ?? "").slice(0, 64),
    init: decoded.initConnectionMessage?.[1] ?? null,
    authToken: decoded.authToken ?? null,
    protocol,
  };
}

/** Zero's encoding of the header: URI-encoded base64 of the UTF-8 of a JSON object. */
function decodeProtocol(protocol: string): v.InferOutput<typeof SecProtocol> {
  let json: unknown;
  try {
    const binary = atob(decodeURIComponent(protocol));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new ZeroError("InvalidConnectionRequest", "Sec-WebSocket-Protocol is not Zero's encoding");
  }
  const result = v.safeParse(SecProtocol, json);
  if (!result.success) {
    throw new ZeroError(
      "InvalidConnectionRequest",
      `Sec-WebSocket-Protocol: ${v.summarize(result.issues).slice(0, 500)}`,
    );
  }
  return result.output;
}
