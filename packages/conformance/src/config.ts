/**
 * The app the suite expects, without the suite itself (which needs vitest), so that a host
 * bundled for another runtime (a Worker) can serve it.
 */
export {
  CONFORMANCE_ADMIN_KEY,
  CONFORMANCE_MAX_CHANGE_ROWS,
  CONFORMANCE_NOTIFY_TOKEN,
  conformanceClaims,
  conformanceConfig,
} from "./conformance-config.js";
