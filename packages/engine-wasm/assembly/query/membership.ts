// A client group's query membership, kept in the namespace's database: its active queries (hash,
// name, args, plan, the tables the plan reads), the rows each holds, and per row how many of the
// group's queries hold it. A row is sent when the first query holds it and deleted when the last
// one lets go. Every step is set-based SQL: rows never cross into the engine.
//
// The scratch table holds, during one pull, the rows of each evaluation and each row whose count
// changed, with whether the group held it before the pull (its kinds: membership-statements.ts);
// the pull empties it before it answers, inside its transaction.
//
// A query evaluated afresh first asks another group to lend its rows (lend.ts).
import { ChangeScope } from "../change-keys";
import { exec, execStatement, queryRows, Statement } from "../host";
import { Schema, Table } from "../schema";
import { jsonString, params } from "../text";
import { Visibility } from "../visibility";
import { Lending } from "./lend";
import { meterQuery } from "./limits";
import { CHANGED, changedScope, membershipStatements } from "./membership-statements";
import { readRootPages } from "./pages";
import { QueryNode, readPlan } from "./plan";
import { RANGE_ROWS } from "./ranges";
import { pagedWindowPlan, RootSql } from "./root-sql";
import { QuerySql } from "./sql";
import { StoredQuery } from "./stored";
import { WindowBound } from "./window-bound";

/** The rows each query holds (a function: a build without the query engine, ../features.ts, holds none of its text). */
export function queryRowsTable(): string {
  return (
    "CREATE TABLE IF NOT EXISTS _weir_query_rows (group_key INTEGER NOT NULL, hash TEXT NOT NULL, tbl TEXT NOT NULL, " +
    "pk TEXT NOT NULL, PRIMARY KEY (group_key, hash, tbl, pk)) WITHOUT ROWID"
  );
}

/** The rows each group holds, with how many of its queries hold each. */
export function groupRowsTable(): string {
  return (
    "CREATE TABLE IF NOT EXISTS _weir_group_rows (group_key INTEGER NOT NULL, tbl TEXT NOT NULL, pk TEXT NOT NULL, " +
    "refs INTEGER NOT NULL, PRIMARY KEY (group_key, tbl, pk)) WITHOUT ROWID"
  );
}

export function membershipSql(): Array<string> {
  return [
    // A group that pulls with queries: the cookie its membership is at, and the host's version of
    // the query transform its ASTs were resolved with, and the visibility its rows were all built
    // under (the host's identity of filters and values; NULL when they may mix several, and only a
    // group with one lends its rows).
    // The last two: where a client that loses the group's last answer resumes (resume.ts).
    "CREATE TABLE IF NOT EXISTS _weir_query_groups (group_id TEXT PRIMARY KEY, cookie INTEGER NOT NULL, " +
      "transform_version TEXT, visibility TEXT, resume_cookie INTEGER, resume_since INTEGER) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS _weir_queries (group_id TEXT NOT NULL, hash TEXT NOT NULL, name TEXT NOT NULL, " +
      "args TEXT NOT NULL, plan TEXT NOT NULL, tables TEXT NOT NULL, PRIMARY KEY (group_id, hash)) WITHOUT ROWID",
    // The groups holding a query, to lend its rows.
    "CREATE INDEX IF NOT EXISTS _weir_queries_hash ON _weir_queries (hash)",
    // A group's rows are keyed by a small integer that stands for its id: a new group's key is the
    // highest yet, so its rows go in at the end of the tables, in full pages, and every row is
    // shorter by the id.
    "CREATE TABLE IF NOT EXISTS _weir_group_keys (group_key INTEGER PRIMARY KEY, group_id TEXT NOT NULL UNIQUE)",
    queryRowsTable(),
    groupRowsTable(),
    "CREATE TABLE IF NOT EXISTS _weir_query_scratch (kind INTEGER NOT NULL, tbl TEXT NOT NULL, pk TEXT NOT NULL, " +
      "was_held INTEGER NOT NULL, PRIMARY KEY (kind, tbl, pk)) WITHOUT ROWID",
  ];
}

// Scratch kinds below 0 hold the rows of one evaluation each (the n-th of the pull: -n).

/** The group's key in the rows tables (a JSON number), given one on its first query-aware pull. */
export function groupKey(group: string): string {
  const found = queryRows("SELECT group_key FROM _weir_group_keys WHERE group_id = ?", params([group]));
  if (found.length > 0) return found[0][0];
  exec("INSERT INTO _weir_group_keys (group_id) VALUES (?)", params([group]));
  return queryRows("SELECT group_key FROM _weir_group_keys WHERE group_id = ?", params([group]))[0][0];
}

/**
 * Membership steps for one group; `group` (its id), `key` (its key in the rows tables) and each
 * `hash` are JSON parameters (a JSON string or number, or a reference to the host's extra
 * parameter).
 */
export class Membership {
  /** Rows the evaluations of this pull produced, and how many they may (the pull's budget). */
  evaluated: i64 = 0;
  budget: i64 = I64.MAX_VALUE;
  /** Fresh evaluations whose rows another group lent (counted in `evaluated` too). */
  copied: i64 = 0;

  /** A query let go of its rows in this pull, to be read again in ranges (evaluations.ts, `readAgain`). */
  readAgain: bool = false;

  /** A query read in ranges holds more rows than the budget, its earlier ranges' counted (ranges.ts). */
  overBudget: bool = false;

  exceeded(): bool {
    return this.evaluated > this.budget || this.overBudget;
  }

  /** Where rows lent to this group come from (lend.ts). */
  lending: Lending;

  /**
   * `watermark`: the version the namespace is at; `floor`: the oldest version the log answers
   * from; `visibilityParam`: the identity of the pull's visibility as a JSON parameter ("null"
   * when the host gave none: no rows are lent).
   */
  constructor(
    public schema: Schema,
    public visibility: Visibility,
    public group: string,
    public key: string,
    watermark: i64 = -1,
    floor: i64 = 0,
    visibilityParam: string = "null",
  ) {
    this.lending = new Lending(schema, group, key, watermark, floor, visibilityParam);
    this.watermark = watermark;
  }

  /** The version the namespace is at (the pages of a query's root are read at it: pages.ts). */
  private watermark: i64;

  /**
   * The pull answers every row the group holds (a reset): which rows moved need not be noted,
   * and the group's rows are built anew (see `clearRows`).
   */
  full: bool = false;
  /** Evaluations so far in this pull: each one's rows are scratch kind -n. */
  private evaluations: i32 = 0;
  /** Rows went into the scratch table in this pull (the pull empties it before it answers). */
  scratched: bool = false;
  /** A row's count moved in this pull (noted as scratch kind 1): settling has work to do. */
  moved: bool = false;
  /** How many more rows the query of the last diff holds than before it (fewer: negative). */
  grown: i64 = 0;

  /**
   * For a reset (after `clearRows`): copies every row of the group's `queries`, with their
   * counts, from a group holding the same queries, when one may lend them. Answers whether one
   * did.
   */
  copyAll(queries: Array<StoredQuery>): bool {
    const rows = this.lending.all(queries);
    if (rows < 0) return false;
    this.evaluated += rows;
    this.copied += queries.length;
    return true;
  }

  /** Forgets every row the group's queries hold, for a reset that evaluates them all afresh. */
  clearRows(): void {
    exec("DELETE FROM _weir_query_rows WHERE group_key = ?", params([this.key]));
    exec("DELETE FROM _weir_group_rows WHERE group_key = ?", params([this.key]));
  }

  /**
   * Replaces the query's rows with `plan`'s current result; `fresh`: the query holds no rows
   * yet (just added, or after `clearRows`), so its rows go in directly.
   */
  evaluate(hash: string, planText: string, fresh: bool = false): void {
    meterQuery(this.group, hash);
    const plan = readPlan(planText, this.schema);
    if (fresh) {
      const lent = this.lending.rows(hash, planText);
      if (lent > 0) {
        this.evaluated += lent;
        this.copied++;
      } else {
        this.evaluated += this.insertHeld(
          "INSERT INTO _weir_query_rows (group_key, hash, tbl, pk) SELECT ?, ?, t, k FROM (",
          [this.key, hash],
          hash,
          planText,
          plan,
        );
      }
      this.addHeld(hash);
    } else {
      const kind = this.nextKind();
      this.scratched = true;
      this.evaluated += this.insertHeld(
        "INSERT INTO _weir_query_scratch (kind, tbl, pk, was_held) SELECT ?, t, k, 0 FROM (",
        [kind],
        hash,
        planText,
        plan,
      );
      this.diff(hash, kind);
    }
    this.keepBound(hash, plan);
  }

  /**
   * After a whole evaluation of a window read in pages (window-bound.ts): keeps its bound, the
   * order's values of its last row, or that it holds every row that passes, so that writes bring
   * it up to date from there (window-upkeep.ts).
   */
  private keepBound(hash: string, plan: QueryNode): void {
    if (!pagedWindowPlan(plan, RANGE_ROWS)) return;
    const bound = new WindowBound(this.group, hash);
    const limit = I64.parseInt(plan.limit, 10);
    if (this.heldRows(hash) < limit) {
      bound.keepAll();
      return;
    }
    const end = new RootSql(this.visibility);
    bound.moveTo(plan, end.windowEnd(plan, null, <i32>(limit - 1)), end.params);
  }

  /** Lets go of the query's rows among `rows` (columns t, k; `rowParams` its parameters); answers how many. */
  letGo(hash: string, rows: string, rowParams: Array<string>): i64 {
    const kind = this.nextKind();
    this.scratchRows(rows, rowParams, kind);
    this.diff(hash, this.nextKind(), membershipStatements().among, [kind]);
    return -this.grown;
  }

  /** Counts the rows the query holds, all new to it, in the group's (noting those new to the group). */
  private addHeld(hash: string): void {
    const gh = params([this.key, hash]);
    if (!this.full) {
      this.scratched = true;
      this.moved = true;
      exec(
        "INSERT INTO _weir_query_scratch (kind, tbl, pk, was_held) SELECT " +
          CHANGED +
          ", r.tbl, r.pk, 0 FROM _weir_query_rows AS r WHERE r.group_key = ? AND r.hash = ? AND NOT EXISTS " +
          "(SELECT 1 FROM _weir_group_rows AS g WHERE g.group_key = r.group_key AND g.tbl = r.tbl AND g.pk = r.pk) " +
          "ON CONFLICT DO NOTHING",
        gh,
      );
    }
    exec(
      "INSERT INTO _weir_group_rows (group_key, tbl, pk, refs) SELECT group_key, tbl, pk, 1 FROM _weir_query_rows " +
        "WHERE group_key = ? AND hash = ? ON CONFLICT (group_key, tbl, pk) DO UPDATE SET refs = refs + 1",
      gh,
    );
  }

  /**
   * Evaluates the plan and inserts the rows it holds (columns t, k) by `head`, an INSERT ...
   * SELECT ... FROM ( that reads them, whose own parameters are `first`. Answers how many. A
   * root the host pages is read in pages first (pages.ts).
   */
  private insertHeld(
    head: string,
    first: Array<string>,
    hash: string,
    planText: string,
    plan: QueryNode,
  ): i64 {
    const sql = new QuerySql(this.visibility);
    readRootPages(sql, this.visibility, plan, hash, jsonString(planText), this.watermark);
    sql.held(plan, null, null);
    for (let i = 0; i < sql.params.length; i++) first.push(sql.params[i]);
    return <i64>exec(head + sql.heldStatement() + ") WHERE 1 ON CONFLICT DO NOTHING", params(first));
  }

  /**
   * Brings the query's rows up to date among the rows of its table changed in [from, to)
   * (sequence numbers) that `scope` reads, for a plan whose other rows cannot have moved
   * (`changedRowsPlan`); `through`: only those up to that key (a JSON array), where the query
   * holds the rows of its ranges so far (ranges.ts).
   */
  evaluateChanged(
    hash: string,
    plan: QueryNode,
    from: i64,
    to: i64,
    scope: ChangeScope,
    through: string = "",
    bound: WindowBound | null = null,
  ): void {
    const sql = new RootSql(this.visibility);
    const kind = this.nextKind();
    this.scratchRows(sql.changedRows(plan, from, to, scope, through, bound), sql.params, kind);
    const scopeParams: string[] = [];
    const read = scope.of(plan.table, "_weir_c", from.toString(), to.toString(), scopeParams);
    this.diff(hash, kind, changedScope(plan.table, read), scopeParams);
  }

  /**
   * Lets go of the query's rows among those of `table` changed in [from, to) (sequence numbers)
   * that `scope` reads: a deferred query that keeps its rows keeps only those no write changed
   * (deferred.ts).
   */
  releaseChanged(hash: string, table: Table, from: i64, to: i64, scope: ChangeScope): void {
    new WindowBound(this.group, hash).forget();
    const scopeParams: string[] = [];
    const read = scope.of(table, "_weir_c", from.toString(), to.toString(), scopeParams);
    // Diffed against an evaluation that holds nothing: every such row is let go of.
    this.diff(hash, this.nextKind(), changedScope(table, read), scopeParams);
  }

  /**
   * For a query evaluated afresh in ranges (ranges.ts; a `changedRowsPlan`): asks another group
   * to lend its rows, before its first range. Answers whether one did (then the query holds them).
   */
  lend(hash: string, planText: string, plan: QueryNode): bool {
    meterQuery(this.group, hash);
    const lent = this.lending.rows(hash, planText);
    if (lent <= 0) return false;
    this.evaluated += lent;
    this.copied++;
    this.addHeld(hash);
    this.keepBound(hash, plan);
    return true;
  }

  /** The ms a query read in ranges or pages has spent in its evaluations, its last one's included. */
  spent: f64 = 0;

  /** How many rows the query holds. */
  heldRows(hash: string): i64 {
    return I64.parseInt(
      queryRows(
        "SELECT count(*) FROM _weir_query_rows WHERE group_key = ? AND hash = ?",
        params([this.key, hash]),
      )[0][0],
      10,
    );
  }

  /**
   * Puts `rows` (columns t, k; `rowParams` its parameters) in scratch kind `kind`; answers how
   * many. They count as evaluated rows (the pull's `maxQueryRows`) unless not `counted`.
   */
  scratchRows(rows: string, rowParams: Array<string>, kind: string, counted: bool = true): i64 {
    this.scratched = true;
    const bound: string[] = [kind];
    for (let i = 0; i < rowParams.length; i++) bound.push(rowParams[i]);
    const found = <i64>(
      exec(
        "INSERT INTO _weir_query_scratch (kind, tbl, pk, was_held) SELECT ?, t, k, 0 FROM (" +
          rows +
          ") WHERE 1 ON CONFLICT DO NOTHING",
        params(bound),
      )
    );
    if (counted) this.evaluated += found;
    return found;
  }

  /**
   * Adds the `found` rows of scratch kind `kind` to the query's. They are new to it: a query's
   * ranges never overlap, and the rows it holds are those of its ranges so far (ranges.ts; a
   * related row an earlier range holds too was taken out, `dropHeld`). So they are added as they
   * are, without a diff.
   */
  addFound(hash: string, kind: string, found: i64): void {
    if (found == 0) return;
    this.moved = true;
    const statements = membershipStatements();
    if (!this.full) execStatement(statements.noteFound, params([kind, this.key]));
    execStatement(statements.keepFound, params([this.key, hash, kind]));
    execStatement(statements.countFound, params([this.key, kind]));
  }

  /** Takes the rows the query holds already out of scratch kind `kind`; answers how many. */
  dropHeld(hash: string, kind: string): i64 {
    const dropped = <i64>(
      exec(
        "DELETE FROM _weir_query_scratch WHERE kind = ? AND EXISTS (SELECT 1 FROM _weir_query_rows AS r WHERE " +
          "r.group_key = ? AND r.hash = ? AND r.tbl = _weir_query_scratch.tbl AND r.pk = _weir_query_scratch.pk)",
        params([kind, this.key, hash]),
      )
    );
    this.evaluated -= dropped;
    return dropped;
  }

  /**
   * Brings the query's rows up to date among the rows of scratch kind `among` (columns tbl, pk):
   * those it holds there now are `rows` (columns t, k; `rowParams` its parameters), and its rows
   * elsewhere stay as they are (subtree-upkeep.ts).
   */
  evaluateAmong(hash: string, among: string, rows: string, rowParams: Array<string>): void {
    const kind = this.nextKind();
    this.scratchRows(rows, rowParams, kind);
    this.diff(hash, kind, membershipStatements().among, [among]);
  }

  /** Lets go of every row of the query (its result is empty now). */
  release(hash: string): void {
    new WindowBound(this.group, hash).forget();
    // A reset built the group's rows anew: the query holds none.
    if (this.full) return;
    this.diff(hash, this.nextKind());
  }

  /** A diff let go of rows in this pull: a row's count may have fallen to zero. */
  private lowered: bool = false;

  /**
   * Drops the rows no query holds any longer; before the answer reads the group's rows. Only a
   * row whose count fell can have fallen to zero, and each such row was noted (scratch kind 1).
   * A pull that only added rows (a hydration's ranges) has none to drop.
   */
  settle(): void {
    if (!this.lowered) return;
    exec(
      "DELETE FROM _weir_group_rows WHERE group_key = ? AND refs <= 0 AND (tbl, pk) IN (SELECT tbl, pk FROM " +
        "_weir_query_scratch WHERE kind = " +
        CHANGED +
        ")",
      params([this.key]),
    );
  }

  /** The scratch kind of the pull's next evaluation. */
  nextKind(): string {
    return (-++this.evaluations).toString();
  }

  // The query's stored rows against the evaluated ones (scratch kind `kind`). The rows it no
  // longer holds and those it holds anew are found once each (scratch kinds GONE and ADDED, a
  // few rows where a write moved a few), and every step after reads them alone: a query of
  // thousands of rows is read twice, not once per step. Before a row's count moves for the first
  // time in this pull, whether the group held it is noted (scratch kind 1). An unchanged result
  // stops after the two reads. `scope` limits the stored rows compared to those the evaluation
  // looked at; `scopeParams` are its parameters.
  private diff(
    hash: string,
    kind: string,
    scope: Statement = membershipStatements().whole,
    scopeParams: Array<string> = [] as string[],
  ): void {
    const sql = membershipStatements();
    // The parameters of `gone`: group, hash, the scope's, kind.
    const goneParams: string[] = [this.key, hash];
    for (let i = 0; i < scopeParams.length; i++) goneParams.push(scopeParams[i]);
    goneParams.push(kind);
    const gone = execStatement(scope, params(goneParams));
    const added = execStatement(sql.added, params([this.key, kind, this.key, hash]));
    this.grown = <i64>added - <i64>gone;
    if (gone + added == 0) return;
    if (gone > 0) this.lowered = true;
    this.scratched = true;
    this.moved = true;
    // A reset answers every held row: which moved need not be noted.
    if (!this.full) execStatement(sql.note);
    execStatement(sql.release, params([this.key]));
    execStatement(sql.forget, params([this.key, hash]));
    execStatement(sql.addRows, params([this.key]));
    execStatement(sql.keepRows, params([this.key, hash]));
    execStatement(sql.clear);
  }
}
