import * as v from "valibot";
import { IdString } from "../fields.js";

/**
 * `["deleteClients", body]`, both ways: up, the clients (or groups) the client's storage let go
 * of; down, the echo of the clients the server forgot.
 */
export const ZeroDeleteClientsBody = v.object({
  clientIDs: v.optional(v.array(IdString)),
  clientGroupIDs: v.optional(v.array(IdString)),
});
export type ZeroDeleteClientsBody = v.InferOutput<typeof ZeroDeleteClientsBody>;
