import {
  authorizeNamespace,
  ConfigError,
  checkAdmin,
  checkNotify,
  consoleJsonLogger,
  errorDetail,
  errorResponse,
  HttpError,
  internalErrorBody,
  jsonResponse,
  matchRoute,
  namespaceHash,
  newRequestId,
  type ResolvedConfig,
  type Route,
  resolveConfig,
  tooLarge,
  userSocketProblems,
} from "@weir/host-core";
import { readBoundedBody } from "./bounded-body.js";
import { authenticateAtEdge } from "./edge-auth.js";
import { configFor, type EdgeConfig, type EdgeConfigSource } from "./edge-config.js";
import {
  DROPPED_HEADER,
  droppedResponse,
  encodeForwarded,
  FORWARDED_HEADER,
  type Forwarded,
  stripInternalHeaders,
} from "./forwarded-request.js";
import { zeroAtEdge } from "./zero-at-edge.js";

export const DEFAULT_BINDING = "WEIR";

export interface SyncWorker<Env> {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response>;
}

const resolvedConfigs = new WeakMap<object, ResolvedConfig>();

/**
 * The Worker in front of the sync objects. It answers bad routes, 401 and 403 itself, so a
 * refused request never wakes an object; the rest go to the namespace's object with the claims
 * (or the admin check) in a header that only it sets.
 */
export function createSyncWorker<Env>(source: EdgeConfigSource<Env>): SyncWorker<Env> {
  return {
    async fetch(request, env) {
      const config = configFor(source, env);
      const logger = config.logger ?? consoleJsonLogger;
      try {
        let resolved = resolvedConfigs.get(config);
        if (!resolved) {
          resolved = resolveConfig(config);
          // The edge's own options, checked before any object is woken (each checks them too).
          const problems = userSocketProblems(config);
          if (problems.length > 0) throw new ConfigError(problems);
          resolvedConfigs.set(config, resolved);
        }
        const url = new URL(request.url);
        const pathname = withoutBase(url.pathname, config.basePath);
        const route = matchRoute(request.method, pathname);
        const forwarded: Forwarded = { ns: await namespaceHash(route.namespace) };
        if (route.type === "admin") {
          await checkAdmin(config, request);
          forwarded.admin = true;
        } else if (route.type === "notify") {
          await checkNotify(config, request, route.namespace);
          // A namespace without an upstream is refused here, never woken (nor created).
          if (!resolved.upstream?.source(route.namespace)) {
            throw new HttpError("not_found", "this namespace has no upstream");
          }
          forwarded.notify = true;
        } else if (route.type === "zero") {
          const checked = await zeroAtEdge(config, resolved, request, route, logger);
          if (checked instanceof Response) return checked;
          forwarded.claims = checked;
        } else {
          forwarded.claims = await authenticateAtEdge(config, request, logger);
          // Refused here, a namespace is never created (nor its object woken).
          await authorizeNamespace(resolved, forwarded.claims, route.namespace);
        }
        const headers = stripInternalHeaders(request.headers);
        headers.set(FORWARDED_HEADER, encodeForwarded(forwarded));
        url.pathname = pathname;
        const body = await boundedBody(request, resolved.maxBodyBytes);
        const response = await objectFor(config, env, route).fetch(
          new Request(url, { method: request.method, body, headers, redirect: "manual" }),
        );
        return response.headers.has(DROPPED_HEADER) ? droppedResponse() : response;
      } catch (error) {
        if (error instanceof HttpError) {
          return errorResponse(error.status, error.code, error.message, error.headers);
        }
        const requestId = newRequestId();
        logger.log("error", { msg: "edge request failed", requestId, error: errorDetail(error) });
        return jsonResponse(internalErrorBody(requestId), 500, { "x-request-id": requestId });
      }
    },
  };
}

function objectFor<Env>(config: EdgeConfig<Env>, env: Env, route: Route): DurableObjectStub {
  const name = config.binding ?? DEFAULT_BINDING;
  const binding = (env as Record<string, unknown> | undefined)?.[name] as DurableObjectNamespace | undefined;
  if (!binding || typeof binding.idFromName !== "function") {
    throw new Error(`no Durable Object binding ${name}: bind the sync object class under that name`);
  }
  return binding.get(binding.idFromName(route.namespace));
}

function withoutBase(pathname: string, basePath: string | undefined): string {
  if (!basePath || basePath === "/") return pathname;
  const base = basePath.endsWith("/") ? basePath.slice(0, -1) : basePath;
  if (pathname === base || pathname.startsWith(`${base}/`)) return pathname.slice(base.length) || "/";
  throw new HttpError("not_found", `no route for ${pathname.slice(0, 200)}`);
}

/**
 * The body to forward. One within the limit by its declared length streams on to the object,
 * which reads exactly that much. One declared larger, or sent without a length, is refused or
 * read here: an object that answered before reading a body its Worker was still forwarding
 * would leave the client's upload cut off, and the client without the answer.
 */
async function boundedBody(request: Request, maxBytes: number): Promise<BodyInit | null> {
  if (!request.body) return null;
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) <= maxBytes) return request.body;
  const bytes = await readBoundedBody(request.body, maxBytes);
  if (bytes === null) throw tooLarge(maxBytes);
  return bytes;
}
