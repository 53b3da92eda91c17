// The platform's own cost of an acknowledged write, for `pnpm bench edge` to compare against:
// a Worker that forwards the request to a SQLite-backed Durable Object, which stores one row and
// answers once it is committed. No auth, no validation, no sync: only what every push must pay.
import { DurableObject } from "cloudflare:workers";

export class Store extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS rows (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
  }

  async fetch(request) {
    const body = await request.text();
    this.ctx.storage.sql.exec("INSERT INTO rows (body) VALUES (?)", body);
    return Response.json({ ok: true });
  }
}

// `?object=<name>` writes to another object than the warm one: a new name is a new object, whose
// first write is the platform's own cost of a cold start.
export default {
  fetch(request, env) {
    const name = new URL(request.url).searchParams.get("object") ?? "floor";
    return env.STORE.get(env.STORE.idFromName(name)).fetch(request);
  },
};
