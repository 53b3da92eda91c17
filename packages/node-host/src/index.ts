export type { Claims, Mutator, MutatorContext, MutatorTx, WeirConfig } from "@weir/host-core";
export { MutatorError } from "@weir/host-core";
export { credential, devAuthenticator, type JwtOptions, jwtAuthenticator } from "./auth.js";
export { createServer, type ListenOptions, type NodeHostOptions, type WeirServer } from "./create-server.js";
export { type JsonLineLogger, jsonLineLogger } from "./json-line-logger.js";
export { loadNodeEngine } from "./load-node-engine.js";
export { serve } from "./serve.js";
export { fileStorage, memoryStorage } from "./storage.js";
