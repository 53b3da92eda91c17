import { afterAll, beforeAll, describe } from "vitest";
import { type EdgeWorkerd, startEdgeWorkerd } from "../test/edge-workerd.js";
import { zeroExistsSuite } from "../test/zero-exists-suite.js";

// The stock Zero client's whereExists views against weir's edge host in real workerd
// (Miniflare): the issue tracker's Worker and one Durable Object per namespace.

let workerd: EdgeWorkerd;

beforeAll(async () => {
  workerd = await startEdgeWorkerd({ app: "issues" });
});

afterAll(async () => {
  await workerd.dispose();
});

describe("whereExists views of the stock Zero client on the edge", () => zeroExistsSuite(() => workerd.url));
