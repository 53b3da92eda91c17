import { authenticateRequest, type Claims, type Logger, type WeirConfig } from "@weir/host-core";
import { MAX_FORWARDED_BYTES } from "./forwarded-request.js";

/**
 * The claims `authenticate` answers (host-core's rules: 401 for none, an error for a bad user
 * id), as plain JSON, which is what can cross to the object. Claims JSON cannot carry, or too
 * large to forward, are the app's bug: a 500.
 */
export async function authenticateAtEdge(
  config: WeirConfig,
  request: Request,
  logger: Logger,
): Promise<Claims> {
  const claims = await authenticateRequest(config, logger, request);
  const text = JSON.stringify(claims);
  if (text.length > MAX_FORWARDED_BYTES) {
    throw new Error(
      `authenticate answered claims of ${text.length} characters; at most ${MAX_FORWARDED_BYTES} travel`,
    );
  }
  return JSON.parse(text) as Claims;
}
