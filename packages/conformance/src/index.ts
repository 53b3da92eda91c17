import { afterAll, beforeAll, describe } from "vitest";
import { adminSuite } from "./admin-suite.js";
import { badInputSuite } from "./bad-input-suite.js";
import { claimsSuite } from "./claims-suite.js";
import { convergenceSuite, correctnessSuite, outsideWritesSuite } from "./correctness-suite.js";
import { delegatedPushSuite } from "./delegated-push-suite.js";
import { ingestSuite } from "./ingest-suite.js";
import { nativeSuite } from "./native-suite.js";
import { queriesSuite } from "./queries-suite.js";
import { refusalsSuite } from "./refusals-suite.js";
import { replicacheSuite } from "./replicache-suite.js";
import { type SuiteApp, startSuiteApp } from "./suite-app.js";
import { type SuiteUpstream, startSuiteUpstream } from "./suite-upstream.js";
import type { ConformanceTarget } from "./target.js";
import { wakeSuite } from "./wake-suite.js";

export {
  CONFORMANCE_ADMIN_KEY,
  CONFORMANCE_CARD_SCORES,
  CONFORMANCE_MAX_CHANGE_ROWS,
  CONFORMANCE_NOTIFY_TOKEN,
  CONFORMANCE_SCHEMA,
  conformanceClaims,
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
export { type AppMisbehaviour, type SuiteApp, startSuiteApp } from "./suite-app.js";
export { type SuiteUpstream, SuiteUpstreamNamespace, startSuiteUpstream } from "./suite-upstream.js";
export type { ConformanceTarget } from "./target.js";
export { Listener, type OpenWake, type RefusedWake, wakeSocket, wakeUrl } from "./wake-listener.js";
export {
  connectZero,
  pokePartsOf,
  until,
  type ZeroConnectOptions,
  type ZeroTestSocket,
  zeroSecProtocol,
} from "./zero-socket-client.js";
export { runZeroConformance, zeroSuite } from "./zero-suite.js";

/** What the suite runs beside the host, for `makeTarget` to configure it with. */
export interface ConformanceEnvironment {
  /** The suite's upstream: pass it as `conformanceConfig({ upstreamUrl, appUrl })`. */
  upstreamUrl: string;
  /** The suite's app, which delegated pushes go to. */
  appUrl: string;
}

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
  makeTarget: (environment: ConformanceEnvironment) => Promise<ConformanceTarget>,
  options: ConformanceOptions = {},
): void {
  describe(`conformance: ${name}`, () => {
    let target: ConformanceTarget | undefined;
    let upstream: SuiteUpstream | undefined;
    let app: SuiteApp | undefined;
    const current = () => {
      if (!target) throw new Error("the conformance target did not start");
      return target;
    };
    beforeAll(async () => {
      upstream = await startSuiteUpstream();
      app = await startSuiteApp(upstream);
      target = await makeTarget({ upstreamUrl: upstream.url, appUrl: app.url });
    });
    afterAll(async () => {
      await target?.close();
      await app?.close();
      await upstream?.close();
    });
    describe("native dialect", () => nativeSuite(current));
    describe("replicache dialect", () => replicacheSuite(current));
    describe("admin", () => adminSuite(current));
    describe("bad input", () => badInputSuite(current));
    describe("refusals", () => refusalsSuite(current));
    describe("wake", () => wakeSuite(current));
    describe("pull correctness", () => correctnessSuite(current));
    describe("query-aware pull", () => queriesSuite(current));
    describe("claims changes", () => claimsSuite(current));
    describe("convergence", () => convergenceSuite(current));
    if (options.writesOutsidePush) describe("writes outside a push", () => outsideWritesSuite(current));
    describe("upstream ingest", () =>
      ingestSuite(current, () => {
        if (!upstream) throw new Error("the suite's upstream did not start");
        return upstream;
      }));
    describe("delegated push", () =>
      delegatedPushSuite(current, () => {
        if (!app) throw new Error("the suite's app did not start");
        return app;
      }));
  });
}
