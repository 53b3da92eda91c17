export { adminCall } from "./commands/admin.js";
export { run } from "./run.js";
