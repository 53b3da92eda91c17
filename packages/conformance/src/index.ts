import { afterAll, beforeAll, describe } from "vitest";
import { adminSuite } from "./admin-suite.js";
import { badInputSuite } from "./bad-input-suite.js";
import { convergenceSuite, correctnessSuite, outsideWritesSuite } from "./correctness-suite.js";
import { nativeSuite } from "./native-suite.js";
import { refusalsSuite } from "./refusals-suite.js";
import { replicacheSuite } from "./replicache-suite.js";
import type { ConformanceTarget } from "./target.js";
import { wakeSuite } from "./wake-suite.js";

export {
  CONFORMANCE_ADMIN_KEY,
  CONFORMANCE_CARD_SCORES,
  CONFORMANCE_MAX_CHANGE_ROWS,
  conformanceConfig,
} from "./conformance-config.js";
export { type ConvergenceOptions, runHttpConvergence } from "./convergence.js";
export {
  type Answer,
  admin,
  call,
  freshNamespace,
  NativeClient,
  type RequestOptions,
} from "./http-client.js";
export type { ConformanceTarget } from "./target.js";

export interface ConformanceOptions {
  /** The target implements `writeOutsidePush`. */
  writesOutsidePush?: boolean;
}

/**
 * Registers the conformance suite (vitest) against a host that `makeTarget` starts with
 * `conformanceConfig()`. Every test uses a namespace of its own, so one target serves them all.
 */
export function runConformance(
  name: string,
  makeTarget: () => Promise<ConformanceTarget>,
  options: ConformanceOptions = {},
): void {
  describe(`conformance: ${name}`, () => {
    let target: ConformanceTarget | undefined;
    const current = () => {
      if (!target) throw new Error("the conformance target did not start");
      return target;
    };
    beforeAll(async () => {
      target = await makeTarget();
    });
    afterAll(async () => {
      await target?.close();
    });
    describe("native dialect", () => nativeSuite(current));
    describe("replicache dialect", () => replicacheSuite(current));
    describe("admin", () => adminSuite(current));
    describe("bad input", () => badInputSuite(current));
    describe("refusals", () => refusalsSuite(current));
    describe("wake", () => wakeSuite(current));
    describe("pull correctness", () => correctnessSuite(current));
    describe("convergence", () => convergenceSuite(current));
    if (options.writesOutsidePush) describe("writes outside a push", () => outsideWritesSuite(current));
  });
}
