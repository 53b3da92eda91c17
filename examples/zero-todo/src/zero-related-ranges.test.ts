import { createServer } from "@weir/node-host";
import { afterAll, beforeAll, describe } from "vitest";
import { issueServer } from "../test/issues-app.js";
import { zeroRelatedSuite } from "../test/zero-related-suite.js";

// Every issue with its labels, on a running weir Node host whose answers have no time: the query
// is read in ranges of its issues, a part each. Its steps have time enough: the budget is wall
// time, and on a machine other work loads a range of 2,048 issues with their labels can pass the
// default 50 ms (the query is then refused, which is not what this case is about).

let server: ReturnType<typeof createServer>;
let url: string;

beforeAll(async () => {
  server = createServer({
    ...issueServer,
    devAuth: true,
    storage: "memory",
    queryAnswerMs: 0,
    queryBudgetMs: 60_000,
    logger: { log: () => {} },
  });
  url = (await server.listen({ port: 0, host: "127.0.0.1" })).url.replace(/\/$/, "");
});

afterAll(async () => {
  await server.close();
});

describe("the stock Zero client holding every issue with its labels, read in ranges", () =>
  zeroRelatedSuite(() => url));
