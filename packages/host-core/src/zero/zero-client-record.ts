import type { ZeroDownstream, ZeroPullRequestBody } from "@weir/protocol";
import type { Claims } from "../auth/claims.js";
import type { ZeroConnectRequest } from "./zero-connect-request.js";
import { formatZeroCookie } from "./zero-cookie.js";
import { ZeroError } from "./zero-error.js";
import type { ZeroNamespace } from "./zero-namespace.js";

/**
 * The client's `lmid` (the last mutation id it saw confirmed) checked against the server's
 * record: a client that claims more than the server ever acknowledged holds state the server
 * lost (a restored or recreated database). It is refused with
 * InvalidConnectionRequestLastMutationID, on which the stock client drops its local copy and
 * starts again, as it does for a base cookie from the future.
 */
export function checkLastMutationID(ns: ZeroNamespace, request: ZeroConnectRequest): void {
  if (request.lmid === 0) return;
  const recorded = ns.lastMutationID(request.clientGroupID, request.clientID);
  if (request.lmid > recorded) {
    throw new ZeroError(
      "InvalidConnectionRequestLastMutationID",
      `the client's last mutation id ${request.lmid} is ahead of the server's ${recorded}`,
    );
  }
}

/**
 * The answer to a `pull` (Zero's mutation recovery: the client asks which mutations of an old
 * client group of the same browser profile the server confirmed, to drop them from its queue):
 * `["pull", { requestID, cookie, lastMutationIDChanges }]` with every client of that group and
 * its confirmed id. A group the server does not know, or another user's, has none. The cookie is
 * the namespace's version the ids were read at (the client does not use it).
 */
export function recoveryPullAnswer(
  ns: ZeroNamespace,
  body: ZeroPullRequestBody,
  claims: Claims,
): ZeroDownstream {
  const version = ns.watermark();
  const lastMutationIDChanges = ns.groupMutationIDs(body.clientGroupID, claims.userID);
  return [
    "pull",
    { requestID: body.requestID, cookie: formatZeroCookie({ version, step: 0 }), lastMutationIDChanges },
  ];
}
