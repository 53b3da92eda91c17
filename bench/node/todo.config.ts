// The second server `pnpm bench node` measures: the todo example's own config (its schema, its
// mutators with their valibot argument checks, visibility by owner), request logs on as in
// every `weir serve`. The load generator sends `createTodo` with the example's arguments.
import { todoConfig } from "../../examples/todo/src/todo-config.js";

export default {
  ...todoConfig,
  // As in the first config: the request quota is kept (its cost is measured) but made too
  // large to refuse any request of the run.
  quotas: { requestUnits: 1_000_000_000 },
};
