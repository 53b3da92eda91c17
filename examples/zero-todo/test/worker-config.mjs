// The options each worker thread of a test's server loads (a config's functions cannot cross
// threads): the example's server config, from its build, in the test's data directory.
import { zeroTodoConfig } from "../dist/zero-config.js";

export default function options({ dataDir }) {
  return { ...zeroTodoConfig, dataDir, logger: { log() {} } };
}
