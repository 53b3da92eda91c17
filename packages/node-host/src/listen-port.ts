/** The port weir serves on when nothing else says. */
export const DEFAULT_PORT = 4848;

/** Whether a value is a TCP port number (0 picks a free one). */
export function isPort(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= 65_535;
}

/** The `PORT` environment variable as a port, undefined when unset; throws when it is not one. */
export function portFromEnv(env: Record<string, string | undefined> = process.env): number | undefined {
  const text = env.PORT;
  if (text === undefined || text === "") return undefined;
  const port = Number(text);
  if (!isPort(port)) throw new Error(`PORT must be a port number (0 to 65535), not ${JSON.stringify(text)}`);
  return port;
}
