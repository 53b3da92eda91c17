import { createServer } from "@weir/node-host";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { mutators, queries, rowsOf, type TodoZero, zeroClient } from "../test/zero-client.js";
import { zeroTodoConfig } from "./zero-config.js";

// The stock Zero client (1.9.0, sync protocol v51, memory store) against a running weir Node
// host: real WebSockets on a random loopback port, real SQLite.

interface Todo {
  id: string;
  owner: string;
  text: string;
  done: boolean;
  sort: number;
}

type Server = ReturnType<typeof createServer>;

let server: Server;
let base: string;
const clients: TodoZero[] = [];

beforeAll(async () => {
  server = createServer({ ...zeroTodoConfig, storage: "memory", logger: { log: () => {} } });
  const { url } = await server.listen({ port: 0, host: "127.0.0.1" });
  base = `${url.replace(/\/$/, "")}/todo`;
});

afterAll(async () => {
  await server.close();
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
});

function client(user: string): TodoZero {
  const z = zeroClient(base, user);
  clients.push(z);
  return z;
}

let ids = 0;
const newID = () => `t${++ids}-${Date.now()}`;

describe("the stock Zero client", () => {
  it("subscribes to a named query, and a confirmed custom mutation's row arrives complete", async () => {
    const z = client("alice");
    const id = newID();
    const result = z.mutate(mutators.createTodo({ id, text: "Walk", done: false, sort: 1 }) as never) as {
      server: Promise<{ type: string }>;
    };
    expect(await result.server).toEqual({ type: "success" });
    const rows = await rowsOf<Todo>(z, queries.allTodos(), (rows) => rows.some((row) => row.id === id));
    expect(rows.find((row) => row.id === id)).toMatchObject({ owner: "alice", text: "Walk", done: false });
  });
});
