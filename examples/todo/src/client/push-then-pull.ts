import type { Pusher, PushResponse } from "replicache";

/**
 * A pusher for Replicache's push v1 that asks for a pull once the server has taken the batch.
 * weir wakes every client except the writer, so the writer confirms its own mutations by
 * pulling; without this they would stay pending (and be pushed again) until the next pull.
 */
export function pushThenPull(options: { url: string; auth: string; pull: () => void }): Pusher {
  return async (request, requestID) => {
    const res = await fetch(options.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        authorization: options.auth,
        "x-replicache-requestid": requestID,
      },
      body: JSON.stringify(request),
    });
    const text = await res.text();
    if (res.ok) options.pull();
    return {
      httpRequestInfo: { httpStatusCode: res.status, errorMessage: res.ok ? "" : text },
      response: pushResponse(text),
    };
  };
}

// Replicache acts on two answers in a push body; anything else (`{}`) means nothing to it.
function pushResponse(text: string): PushResponse | undefined {
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body !== "object" || body === null || !("error" in body)) return undefined;
    const { error } = body as { error: unknown };
    if (error === "ClientStateNotFound" || error === "VersionNotSupported") return body as PushResponse;
  } catch {
    // A non-JSON body carries no Replicache instruction; the status code says the rest.
  }
  return undefined;
}
