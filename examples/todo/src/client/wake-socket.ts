/** How the wake socket is doing, shown in the app's footer. */
export type WakeStatus = "connecting" | "live" | "offline";

export interface WakeSocketOptions {
  /** `ws(s)://host/<namespace>/wake?clientID=<id>` */
  url: string;
  /** Called on every `wake`, and after each (re)connect, since wakes sent while away are lost. */
  onWake: () => void;
  onStatus?: (status: WakeStatus) => void;
}

// The socket carries no data, only the advice to pull. A periodic `ping` keeps idle
// connections alive through proxies; reconnects back off so a down server is not hammered.
const PING_MS = 25_000;
const RETRY_MIN_MS = 500;
const RETRY_MAX_MS = 10_000;

export function connectWakeSocket(options: WakeSocketOptions): { close(): void } {
  let socket: WebSocket | undefined;
  let ping: ReturnType<typeof setInterval> | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let delay = RETRY_MIN_MS;
  let closed = false;

  const open = () => {
    options.onStatus?.("connecting");
    const ws = new WebSocket(options.url);
    socket = ws;
    ws.onopen = () => {
      delay = RETRY_MIN_MS;
      options.onStatus?.("live");
      ping = setInterval(() => ws.send("ping"), PING_MS);
      options.onWake();
    };
    ws.onmessage = (event) => {
      if (event.data === "wake") options.onWake();
    };
    ws.onclose = () => {
      clearInterval(ping);
      if (closed) return;
      options.onStatus?.("offline");
      retry = setTimeout(open, delay);
      delay = Math.min(delay * 2, RETRY_MAX_MS);
    };
  };

  open();
  return {
    close() {
      closed = true;
      clearTimeout(retry);
      clearInterval(ping);
      socket?.close();
    },
  };
}
