// A weir client in the native dialect, as the benchmark's users run it: pulls that keep a cookie
// and count what they received, pushes with the next ids, and a wake socket.
import WebSocket from "ws";
import { post } from "./processes.mjs";

let clients = 0;

export class WeirClient {
  cookie = null;
  lastMutationID = 0;
  nextID = 1;
  /** Puts received per table since the last reset (the benchmark's rows are only inserted). */
  puts = new Map();

  constructor(url, namespace, user = `user${clients}`) {
    clients++;
    this.url = url;
    this.namespace = namespace;
    this.user = user;
    this.clientGroupID = `group-${clients}-${Math.random().toString(36).slice(2, 8)}`;
    this.clientID = `client-${clients}-${Math.random().toString(36).slice(2, 8)}`;
  }

  count(table) {
    return this.puts.get(table) ?? 0;
  }

  async pull() {
    const body = { clientGroupID: this.clientGroupID, clientID: this.clientID, cookie: this.cookie };
    const json = await post(`${this.url}/${this.namespace}/pull`, body, { authorization: this.user });
    this.cookie = json.cookie;
    if (json.unchanged) return json;
    const last = json.lastMutationIDChanges?.[this.clientID];
    if (last !== undefined) this.lastMutationID = last;
    for (const op of json.rowsPatch ?? []) {
      if (op.op === "clear") this.puts.clear();
      else if (op.op === "put") this.puts.set(op.tableName, this.count(op.tableName) + 1);
    }
    return json;
  }

  /** Pulls until an answer says unchanged. */
  async sync() {
    while (!(await this.pull()).unchanged) {}
  }

  push(mutations) {
    const body = {
      clientGroupID: this.clientGroupID,
      pushVersion: 1,
      mutations: mutations.map((m) => ({
        type: "custom",
        id: this.nextID++,
        clientID: this.clientID,
        name: m.name,
        args: [m.args],
        timestamp: Date.now(),
      })),
    };
    return post(`${this.url}/${this.namespace}/push`, body, { authorization: this.user });
  }

  /** Opens the wake socket; `onWake` is called with the time of each message. */
  async watch(onWake) {
    const ws = new WebSocket(
      `${this.url.replace(/^http/, "ws")}/${this.namespace}/wake?clientID=${this.clientID}`,
      { headers: { authorization: this.user } },
    );
    ws.on("message", () => onWake(performance.now()));
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    return ws;
  }
}
