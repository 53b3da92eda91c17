import { isValidNamespace, NAMESPACE_PATTERN } from "@weir/protocol";
import type pg from "pg";
import { quoteIdentifier } from "./quote-identifier.js";
import type { TablePlan } from "./read-tables.js";

/** Tenant values kept as examples in the status, at most. */
const MAX_EXAMPLES = 5;
/** The namespace pattern as PostgreSQL's regular expressions read it. */
const PATTERN = NAMESPACE_PATTERN.source;

/** What `status().tenants` reports. */
export interface UnservableTenantsStatus {
  /** Rows whose tenant value is no namespace name, counted at start (null without a tenant column). */
  unservableRows: number | null;
  /** Changes buffered since start whose tenant value is no namespace name. */
  unservableChanges: number;
  /** Some such values, as PostgreSQL prints them. */
  examples: string[];
}

/**
 * Tenant values that are not namespace names (`Acme Corp`, `x.y`, an e-mail address, more than
 * 64 characters): their rows are buffered but no namespace can ever ask for them. They are
 * counted (rows at start, changes since) for the status, and named at start.
 */
export class UnservableTenants {
  private rows: number | null = null;
  private changes = 0;
  private readonly examples = new Set<string>();

  /** Counts, once at start, the rows of every table with a tenant column that no namespace can serve. */
  async countAtStart(client: pg.Client, schema: string, plans: readonly TablePlan[]): Promise<void> {
    let rows = 0;
    let tenanted = false;
    for (const plan of plans) {
      if (plan.tenantColumn === null) continue;
      tenanted = true;
      const column = `${quoteIdentifier(plan.tenantColumn)}::text`;
      const from = `FROM ${quoteIdentifier(schema)}.${quoteIdentifier(plan.name)} WHERE ${column} !~ $1`;
      const counted = await client.query<{ n: string }>(`SELECT count(*) AS n ${from}`, [PATTERN]);
      const found = Number(counted.rows[0]?.n ?? 0);
      rows += found;
      if (found > 0 && this.examples.size < MAX_EXAMPLES) {
        const values = await client.query<{ v: string }>(`SELECT DISTINCT ${column} AS v ${from} LIMIT $2`, [
          PATTERN,
          MAX_EXAMPLES,
        ]);
        for (const { v } of values.rows) this.remember(v);
      }
    }
    this.rows = tenanted ? rows : null;
  }

  /** A buffered change's tenant value (null: a shared table, or a NULL tenant). */
  note(tenant: string | null): void {
    if (tenant === null || isValidNamespace(tenant)) return;
    this.changes++;
    this.remember(tenant);
  }

  status(): UnservableTenantsStatus {
    return { unservableRows: this.rows, unservableChanges: this.changes, examples: [...this.examples] };
  }

  private remember(value: string): void {
    if (this.examples.size < MAX_EXAMPLES) this.examples.add(value);
  }
}
