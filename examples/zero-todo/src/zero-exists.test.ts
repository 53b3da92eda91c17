import { createServer } from "@weir/node-host";
import { afterAll, beforeAll, describe } from "vitest";
import { issueServer } from "../test/issues-app.js";
import { zeroExistsSuite } from "../test/zero-exists-suite.js";

// The stock Zero client's whereExists views against a running weir Node host.

let server: ReturnType<typeof createServer>;
let url: string;

beforeAll(async () => {
  server = createServer({ ...issueServer, devAuth: true, storage: "memory", logger: { log: () => {} } });
  url = (await server.listen({ port: 0, host: "127.0.0.1" })).url.replace(/\/$/, "");
});

afterAll(async () => {
  await server.close();
});

describe("whereExists views of the stock Zero client", () => zeroExistsSuite(() => url));
