import { afterAll, beforeAll, describe } from "vitest";
import { type EdgeWorkerd, startEdgeWorkerd } from "../test/edge-workerd.js";
import { zeroRelatedSuite } from "../test/zero-related-suite.js";

// Every issue with its labels against weir's edge host in real workerd (Miniflare): the issue
// tracker's Worker and one Durable Object per namespace.

let workerd: EdgeWorkerd;

beforeAll(async () => {
  workerd = await startEdgeWorkerd({ app: "issues" });
});

afterAll(async () => {
  await workerd.dispose();
});

describe("the stock Zero client holding every issue with its labels, on the edge", () =>
  zeroRelatedSuite(() => workerd.url));
