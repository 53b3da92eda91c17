// Engine errors travel to the loader as a result string "!<status>\t<code>\t<message>".

export const ERROR_MARK = "!";

export function fail(status: i32, code: string, message: string): string {
  return ERROR_MARK + status.toString() + "\t" + code + "\t" + message;
}

export function isFailure(result: string): bool {
  return result.startsWith(ERROR_MARK);
}
