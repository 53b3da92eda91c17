// `pnpm bench isolation --no-overflow`: the same server, with no namespace moving to the
// overflow worker (the workers' paging and budgets alone).
import config from "./weir.config.mjs";

export default { ...config, stepBudgetMs: 0 };
