import {
  checkAdmin,
  consoleJsonLogger,
  errorDetail,
  errorResponse,
  HttpError,
  internalErrorBody,
  jsonResponse,
  matchRoute,
  namespaceHash,
  newRequestId,
  type Route,
  resolveConfig,
} from "@weir/host-core";
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

export const DEFAULT_BINDING = "WEIR";

export interface SyncWorker<Env> {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response>;
}

const checked = new WeakSet<object>();

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
        if (!checked.has(config)) {
          resolveConfig(config);
          checked.add(config);
        }
        const url = new URL(request.url);
        const pathname = withoutBase(url.pathname, config.basePath);
        const route = matchRoute(request.method, pathname);
        const forwarded: Forwarded = { ns: await namespaceHash(route.namespace) };
        if (route.type === "admin") {
          await checkAdmin(config, request);
          forwarded.admin = true;
        } else {
          forwarded.claims = await authenticateAtEdge(config, request, logger);
        }
        const headers = stripInternalHeaders(request.headers);
        headers.set(FORWARDED_HEADER, encodeForwarded(forwarded));
        url.pathname = pathname;
        const response = await objectFor(config, env, route).fetch(
          new Request(url, { ...requestInit(request), headers }),
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

function requestInit(request: Request): RequestInit {
  return { method: request.method, body: request.body, redirect: "manual" };
}
