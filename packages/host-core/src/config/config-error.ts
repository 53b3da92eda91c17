/** A config that cannot run; its message lists every problem, one per line. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";

  /** `problems`: "<path>: <what is wrong>" lines. */
  constructor(readonly problems: readonly string[]) {
    super(`invalid weir config:\n${problems.map((problem) => ` - ${problem}`).join("\n")}`);
  }
}
