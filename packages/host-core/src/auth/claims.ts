import { MAX_ID_LENGTH } from "@weir/protocol";

/** Who a request acts for, as `authenticate` answers it. `userID` owns client groups and rows. */
export interface Claims {
  userID: string;
  [claim: string]: unknown;
}

/** Whether a value can be a user id: a string of 1 to MAX_ID_LENGTH characters, as every id. */
export function isUserID(value: unknown): value is string {
  return typeof value === "string" && value.length >= 1 && value.length <= MAX_ID_LENGTH;
}
