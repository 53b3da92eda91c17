import {
  createBuilder,
  createSchema,
  defineMutatorsWithType,
  defineMutatorWithType,
  defineQueriesWithType,
  defineQueryWithType,
  relationships,
  string,
  type Transaction,
  table,
  Zero,
} from "@rocicorp/zero";
import type { MutatorTx, WeirConfig } from "@weir/host-core";
import * as v from "valibot";

// A small issue tracker on the stock Zero client, for the `whereExists` cases: issues carry labels
// through a junction table (a many-to-many relationship), a label has a kind, and an issue
// belongs to a project whose members may see it. The server resolves each named query with
// Zero's own query builder, so the client's local evaluation and the server's answer start from
// the same AST.

const issue = table("issue").columns({ id: string(), projectId: string(), title: string() }).primaryKey("id");
const label = table("label").columns({ id: string(), name: string(), kindId: string() }).primaryKey("id");
const issueLabel = table("issueLabel")
  .columns({ issueId: string(), labelId: string() })
  .primaryKey("issueId", "labelId");
const kind = table("kind").columns({ id: string(), name: string() }).primaryKey("id");
const member = table("member")
  .columns({ projectId: string(), userId: string() })
  .primaryKey("projectId", "userId");

const issueRelationships = relationships(issue, ({ many }) => ({
  labels: many(
    { sourceField: ["id"], destField: ["issueId"], destSchema: issueLabel },
    { sourceField: ["labelId"], destField: ["id"], destSchema: label },
  ),
  members: many({ sourceField: ["projectId"], destField: ["projectId"], destSchema: member }),
}));
const labelRelationships = relationships(label, ({ one }) => ({
  kind: one({ sourceField: ["kindId"], destField: ["id"], destSchema: kind }),
}));

export const issueSchema = createSchema({
  tables: [issue, label, issueLabel, kind, member],
  relationships: [issueRelationships, labelRelationships],
});

interface IssueContext {
  userID: string;
}

type IssueSchema = typeof issueSchema;
// The package registers the todo app's schema as Zero's default; these builders take this one.
const defineQuery = defineQueryWithType<IssueSchema, IssueContext>();
const defineQueries = defineQueriesWithType<IssueSchema>();
const defineMutator = defineMutatorWithType<IssueSchema, IssueContext>();
const defineMutators = defineMutatorsWithType<IssueSchema>();

const zql = createBuilder(issueSchema);

/** Zero's query builder over the tracker's schema (a query of it is local: weir syncs none). */
export const issueZql = zql;

/** The queries, as both sides build them. */
export const issueQueries = {
  labelled: (name: string) =>
    zql.issue.whereExists("labels", (q) => q.where("name", name)).orderBy("id", "asc"),
  ofKind: (name: string) =>
    zql.issue
      .whereExists("labels", (q) => q.whereExists("kind", (k) => k.where("name", name)))
      .orderBy("id", "asc"),
  mine: (userID: string) =>
    zql.issue.whereExists("members", (q) => q.where("userId", userID)).orderBy("id", "asc"),
  /** Every issue with its labels (through the junction table) and each label's kind. */
  withLabels: () => zql.issue.related("labels", (q) => q.related("kind")).orderBy("id", "asc"),
};

const Named = v.object({ name: v.string() });

/** The named queries the client subscribes to. */
export const queries = defineQueries({
  labelled: defineQuery(Named, ({ args }) => issueQueries.labelled(args.name)),
  ofKind: defineQuery(Named, ({ args }) => issueQueries.ofKind(args.name)),
  mine: defineQuery(({ ctx }) => issueQueries.mine(ctx.userID)),
  withLabels: defineQuery(() => issueQueries.withLabels()),
});

type Table = "issue" | "label" | "issueLabel" | "kind" | "member";
type Put = { table: Table; row: Record<string, string> };
type Remove = { table: Table; key: Record<string, string> };

/** The client's side of the two mutators: any row put, any row removed. */
export const mutators = defineMutators({
  put: defineMutator(async ({ tx, args }: { tx: Transaction<IssueSchema>; args: Put }) => {
    await (tx.mutate[args.table] as unknown as { upsert(row: unknown): Promise<void> }).upsert(args.row);
  }),
  remove: defineMutator(async ({ tx, args }: { tx: Transaction<IssueSchema>; args: Remove }) => {
    await (tx.mutate[args.table] as unknown as { delete(key: unknown): Promise<void> }).delete(args.key);
  }),
});

/** A query's AST, which Zero's query objects carry (as `ast`) for its own server to read. */
function astOf(query: unknown): unknown {
  return (query as { ast: unknown }).ast;
}

const columns = (...names: string[]) => Object.fromEntries(names.map((name) => [name, "string" as const]));

/** The server: the same tables, the mutators, the queries, and members see only their own rows. */
export const issueServer = {
  schema: {
    tables: {
      issue: { columns: columns("id", "projectId", "title"), primaryKey: ["id"] },
      label: { columns: columns("id", "name", "kindId"), primaryKey: ["id"] },
      issueLabel: { columns: columns("issueId", "labelId"), primaryKey: ["issueId", "labelId"] },
      kind: { columns: columns("id", "name"), primaryKey: ["id"] },
      member: { columns: columns("projectId", "userId"), primaryKey: ["projectId", "userId"] },
    },
  },
  mutators: {
    put(tx: MutatorTx, args: unknown) {
      const { table, row } = args as Put;
      tx.upsert(table, row);
    },
    remove(tx: MutatorTx, args: unknown) {
      const { table, key } = args as Remove;
      tx.delete(table, key);
    },
  },
  queries: {
    labelled: (args: unknown) => astOf(issueQueries.labelled(v.parse(Named, args).name)),
    ofKind: (args: unknown) => astOf(issueQueries.ofKind(v.parse(Named, args).name)),
    mine: (_args: unknown, claims: { userID: string }) => astOf(issueQueries.mine(claims.userID)),
    withLabels: () => astOf(issueQueries.withLabels()),
  },
  visibility: (claims: { userID: string }) => ({ member: { sql: "userId = ?", params: [claims.userID] } }),
} satisfies Omit<WeirConfig, "authenticate">;

/** What the tests use of a client of the tracker. */
export interface IssueZero {
  readonly clientID: string;
  mutate(request: unknown): { client: Promise<unknown>; server: Promise<unknown> };
  materialize(query: unknown): {
    addListener(listener: (data: unknown, resultType: unknown) => void): void;
    destroy(): void;
  };
  run(query: unknown, options?: unknown): Promise<unknown>;
  close(): Promise<void>;
}

// This package registers the todo app's schema as Zero's default type, which bounds every
// client's schema type; the tracker's client is the same stock class, typed by what it is used for.
const StockZero = Zero as unknown as new (options: Record<string, unknown>) => IssueZero;

/** A stock Zero client of the tracker (memory store, a group of its own). */
export function issueClient(cacheURL: string, user: string, storageKey: string): IssueZero {
  const context: IssueContext = { userID: user };
  return new StockZero({
    cacheURL,
    userID: user,
    auth: user,
    schema: issueSchema,
    mutators,
    context,
    kvStore: "mem",
    logLevel: "error",
    storageKey,
  });
}
