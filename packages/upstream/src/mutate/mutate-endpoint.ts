import {
  encodeWatermark,
  type MutateAnswer,
  type MutateRequest,
  MutateRequest as MutateRequestSchema,
  parse,
} from "@weir/protocol";

/** The largest mutate body read by default, in bytes: weir's own push limit's default. */
export const DEFAULT_MUTATE_BODY_BYTES = 4 * 1024 * 1024;

export interface MutateEndpointOptions {
  /** Runs a parsed push for a namespace (a store's `processMutations`). */
  process(
    request: MutateRequest,
    context: { namespace: string; authorization: string | null },
  ): Promise<MutateAnswer>;
  /** Checks the caller weir passes on; false answers 403. Every caller is allowed without it. */
  authorize?(authorization: string | null, namespace: string): boolean | Promise<boolean>;
  /** Whether the app has a store for the namespace; false answers 404. Every namespace without it. */
  knows?(namespace: string): boolean;
  /** The largest body read, in bytes (default 4 MiB); a larger one answers 413. */
  maxBodyBytes?: number;
}

/** The endpoint's answer, with its HTTP status. */
export interface MutateEndpointAnswer {
  status: number;
  body: unknown;
}

export interface MutateEndpoint {
  /** The endpoint as a Fetch-API handler (`Request` in, `Response` out). */
  handleFetch(request: Request): Promise<Response>;
  /** The endpoint for `node:http`: `(req, res) => void`. */
  handleNode(
    req: import("node:http").IncomingMessage,
    res: import("node:http").ServerResponse,
  ): Promise<void>;
}

class RequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const tooLarge = () => new RequestError(413, "payload_too_large", "the body is too large");

/** Watermarks are bigints: decimal strings beyond the safe range, as the contract says. */
function encodeMutateBody(body: unknown): string {
  return JSON.stringify(body, (_key, value) => (typeof value === "bigint" ? encodeWatermark(value) : value));
}

/** Reads a byte stream to text, refusing it once it passes `limit` bytes. */
async function readLimited(chunks: AsyncIterable<Uint8Array>, limit: number): Promise<string> {
  const parts: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of chunks) {
    size += chunk.byteLength;
    if (size > limit) throw tooLarge();
    parts.push(chunk);
  }
  const joined = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    joined.set(part, at);
    at += part.byteLength;
  }
  return new TextDecoder().decode(joined);
}

/**
 * The app's mutate endpoint, whatever store and server carry it: `POST` with the namespace in
 * `x-weir-namespace` and weir's push body. Bad requests answer 4xx and run nothing; a store that
 * fails answers 503 `app_unavailable`, which weir reports to the client, who pushes again.
 */
export function createMutateEndpoint(options: MutateEndpointOptions): MutateEndpoint {
  const limit = options.maxBodyBytes ?? DEFAULT_MUTATE_BODY_BYTES;

  async function answer(
    method: string,
    headers: { get(name: string): string | null },
    readBody: () => Promise<string>,
  ): Promise<MutateEndpointAnswer> {
    try {
      if (method !== "POST")
        throw new RequestError(405, "method_not_allowed", "the mutate endpoint takes POST");
      const namespace = headers.get("x-weir-namespace");
      if (!namespace) throw new RequestError(400, "bad_request", "x-weir-namespace names the namespace");
      if (options.knows && !options.knows(namespace))
        throw new RequestError(404, "not_found", `no app database for ${namespace}`);
      const authorization = headers.get("authorization");
      if (options.authorize && !(await options.authorize(authorization, namespace))) {
        throw new RequestError(403, "forbidden", "this caller may not write here");
      }
      const declared = Number(headers.get("content-length") ?? 0);
      if (declared > limit) throw tooLarge();
      let json: unknown;
      try {
        json = JSON.parse(await readBody());
      } catch (error) {
        if (error instanceof RequestError) throw error;
        throw new RequestError(400, "bad_request", "the body is not JSON");
      }
      const request = parse(MutateRequestSchema, json);
      if (!request.ok) throw new RequestError(400, "bad_request", request.message);
      return { status: 200, body: await options.process(request.value, { namespace, authorization }) };
    } catch (error) {
      if (error instanceof RequestError) {
        return { status: error.status, body: { error: error.code, message: error.message } };
      }
      return { status: 503, body: { error: "app_unavailable", message: (error as Error).message } };
    }
  }

  return {
    async handleFetch(request) {
      const result = await answer(request.method, request.headers, () =>
        request.body ? readLimited(request.body, limit) : Promise.resolve(""),
      );
      return new Response(encodeMutateBody(result.body), {
        status: result.status,
        headers: { "content-type": "application/json" },
      });
    },
    async handleNode(req, res) {
      const headers = {
        get: (name: string) => {
          const value = req.headers[name];
          return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
        },
      };
      const result = await answer(req.method ?? "GET", headers, () => readLimited(req, limit));
      res.writeHead(result.status, { "content-type": "application/json" });
      res.end(encodeMutateBody(result.body));
    },
  };
}
