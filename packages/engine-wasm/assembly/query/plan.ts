// A query plan as the loader writes it (src/plan.ts, layout in src/abi.ts): a checked query
// AST whose names are the schema's and whose values are JSON tokens, read here into a tree.
import {
  PLAN_AND,
  PLAN_COMPARE,
  PLAN_EXISTS,
  PLAN_NONE,
  PLAN_OR,
  PLAN_START,
  PLAN_TOKEN_SEPARATOR,
  PLAN_WITNESS,
} from "../../src/abi";
import { Schema, Table } from "../schema";

export const CONDITION_AND: i32 = 0;
const CONDITION_OR: i32 = 1;
export const CONDITION_COMPARE: i32 = 2;
export const CONDITION_EXISTS: i32 = 3;

/** An equality between a parent's columns and a child's (tokens "#<name>"). */
export class Correlation {
  parent: Array<string> = [] as string[];
  child: Array<string> = [] as string[];
}

export class Condition {
  kind: i32 = CONDITION_AND;
  children: Array<Condition> = [] as Condition[];
  op: string = "";
  left: string = "";
  right: string = "";
  negated: bool = false;
  correlation: Correlation = new Correlation();
  subquery: QueryNode | null = null;
}

/** Whether the correlation's parent columns are the parent table's primary key. */
export function onParentKey(correlation: Correlation, parent: Table): bool {
  if (correlation.parent.length != parent.primaryKey.length) return false;
  for (let i = 0; i < parent.primaryKey.length; i++) {
    if (!correlation.parent.includes("#" + parent.primaryKey[i].name)) return false;
  }
  return true;
}

export class Related {
  constructor(
    public correlation: Correlation,
    public node: QueryNode,
  ) {}
}

export class QueryNode {
  /** Its place in the plan (0 for the root): the SQL alias is `_weir_q<index>`. */
  index: i32 = 0;
  /** "" when there is no limit, else its JSON number. */
  limit: string = "";
  orderColumns: Array<string> = [] as string[];
  orderDescending: Array<bool> = [] as bool[];
  hasStart: bool = false;
  startExclusive: bool = false;
  startValues: Array<string> = [] as string[];
  where: Condition | null = null;
  related: Array<Related> = [] as Related[];
  /**
   * It holds the witnesses of a condition of its parent's (src/condition-witnesses.ts); its own
   * related nodes are witnesses too, and follow its parent's other related nodes.
   */
  witness: bool = false;

  constructor(public table: Table) {}

  alias(): string {
    return "_weir_q" + this.index.toString();
  }
}

class PlanReader {
  tokens: Array<string>;
  at: i32 = 0;
  nodes: i32 = 0;

  constructor(
    text: string,
    public schema: Schema,
  ) {
    this.tokens = text.split(PLAN_TOKEN_SEPARATOR);
  }

  next(): string {
    return this.tokens[this.at++];
  }

  count(): i32 {
    return I32.parseInt(this.next(), 10);
  }

  query(): QueryNode {
    const witness = this.next() == PLAN_WITNESS;
    const node = new QueryNode(this.schema.table(this.next())!);
    node.witness = witness;
    node.index = this.nodes++;
    const limit = this.next();
    node.limit = limit == PLAN_NONE ? "" : limit.substring(1);
    const orderings = this.count();
    for (let i = 0; i < orderings; i++) {
      node.orderColumns.push(this.next());
      node.orderDescending.push(this.next() == "D");
    }
    if (this.next() == PLAN_START) {
      node.hasStart = true;
      node.startExclusive = this.next() == "1";
      for (let i = 0; i < orderings; i++) node.startValues.push(this.next());
    }
    node.where = this.condition();
    const related = this.count();
    for (let i = 0; i < related; i++) {
      const correlation = this.correlation();
      node.related.push(new Related(correlation, this.query()));
    }
    return node;
  }

  correlation(): Correlation {
    const correlation = new Correlation();
    const keys = this.count();
    for (let i = 0; i < keys; i++) correlation.parent.push(this.next());
    for (let i = 0; i < keys; i++) correlation.child.push(this.next());
    return correlation;
  }

  condition(): Condition | null {
    const mark = this.next();
    if (mark == PLAN_NONE) return null;
    const condition = new Condition();
    if (mark == PLAN_AND || mark == PLAN_OR) {
      condition.kind = mark == PLAN_AND ? CONDITION_AND : CONDITION_OR;
      const count = this.count();
      for (let i = 0; i < count; i++) condition.children.push(this.condition()!);
    } else if (mark == PLAN_COMPARE) {
      condition.kind = CONDITION_COMPARE;
      condition.op = this.next();
      condition.left = this.next();
      condition.right = this.next();
    } else if (mark == PLAN_EXISTS) {
      condition.kind = CONDITION_EXISTS;
      condition.negated = this.next() == "1";
      condition.correlation = this.correlation();
      condition.subquery = this.query();
    }
    return condition;
  }
}

/** Reads a plan the loader checked against `schema`. */
export function readPlan(text: string, schema: Schema): QueryNode {
  return new PlanReader(text, schema).query();
}

/** The tables a query reads, each once (whose changes can change its result). */
export function readTables(node: QueryNode, into: Array<string>): void {
  if (!into.includes(node.table.name)) into.push(node.table.name);
  if (node.where != null) conditionTables(node.where!, into);
  for (let i = 0; i < node.related.length; i++) readTables(node.related[i].node, into);
}

function conditionTables(condition: Condition, into: Array<string>): void {
  if (condition.kind == CONDITION_EXISTS) readTables(condition.subquery!, into);
  for (let i = 0; i < condition.children.length; i++) conditionTables(condition.children[i], into);
}
