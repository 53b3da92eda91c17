/** Who a request acts for, as `authenticate` answers it. `userID` owns client groups and rows. */
export interface Claims {
  userID: string;
  [claim: string]: unknown;
}
