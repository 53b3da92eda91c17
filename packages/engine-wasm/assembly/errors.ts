// A refusal travels to the loader as "!<code>\t<message>" (see src/abi.ts), not as a trap, so
// the loader can turn it into a typed error and the instance stays usable. The code is one of
// @weir/protocol's error codes; what status it answers with is the host's business.
import { COLUMN_SEPARATOR, ERROR_MARK } from "../src/abi";

export function fail(code: string, message: string): string {
  return ERROR_MARK + code + COLUMN_SEPARATOR + message;
}
