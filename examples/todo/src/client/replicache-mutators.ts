import { type Mutator, MutatorError, type MutatorTx, type Row, type RowKey } from "@weir/host-core";
import type { ReadonlyJSONValue, WriteTransaction } from "replicache";

/** Tables by name with their primary-key columns: enough to turn a row into its key. */
export interface KeySchema {
  tables: Record<string, { primaryKey: readonly string[] }>;
}

export interface ReplicacheMutatorOptions {
  schema: KeySchema;
  /** The signed-in user, seen by mutators as `tx.claims.userID`, as on the server. */
  userID: string;
}

type ReplicacheMutator = (tx: WriteTransaction, args: ReadonlyJSONValue) => Promise<void>;

/**
 * Turns weir's synchronous mutators into Replicache mutators writing `<table>/<pk>` keys, so
 * the browser runs the very functions the server runs.
 *
 * Replicache reads are asynchronous while weir's mutators read synchronously, so a mutator
 * runs against the rows fetched so far: reading a row not yet fetched stops the run, the row
 * is fetched, and the mutator runs again from the start with its earlier writes discarded.
 * Writes reach Replicache only after a complete run. Mutators are pure functions of the
 * transaction and their arguments, so running one again is safe, and each run fetches one
 * more row, so it ends. `query`/`exec` (raw SQL) exist only on the server; `defer`red effects
 * run only on the server, after its commit.
 */
export function replicacheMutators<M extends Record<string, Mutator>>(
  mutators: M,
  options: ReplicacheMutatorOptions,
): { [K in keyof M]: ReplicacheMutator } {
  const result: Record<string, ReplicacheMutator> = {};
  for (const [name, mutator] of Object.entries(mutators)) {
    result[name] = (tx, args) => run(mutator, tx, args, options);
  }
  return result as { [K in keyof M]: ReplicacheMutator };
}

class RowNotFetched {
  constructor(readonly key: string) {}
}

async function run(
  mutator: Mutator,
  tx: WriteTransaction,
  args: ReadonlyJSONValue,
  options: ReplicacheMutatorOptions,
): Promise<void> {
  const fetched = new Map<string, Row | undefined>();
  for (;;) {
    const writes = new Map<string, Row | null>();
    try {
      mutator(rowTx(tx, fetched, writes, options), args, {
        namespace: "",
        claims: { userID: options.userID },
        clientGroupID: "",
        clientID: tx.clientID,
        mutationID: tx.mutationID,
      });
    } catch (error) {
      if (error instanceof RowNotFetched) {
        fetched.set(error.key, (await tx.get(error.key)) as Row | undefined);
        continue;
      }
      // Replicache replays pending mutations on top of every pull, where a throw would fail
      // the pull. A refusal there is what the server answers too: the mutation does nothing.
      if (tx.reason === "rebase") return;
      throw error;
    }
    for (const [key, row] of writes) {
      if (row === null) await tx.del(key);
      else await tx.set(key, row as ReadonlyJSONValue);
    }
    return;
  }
}

function rowTx(
  tx: WriteTransaction,
  fetched: Map<string, Row | undefined>,
  writes: Map<string, Row | null>,
  options: ReplicacheMutatorOptions,
): MutatorTx {
  const read = (key: string): Row | undefined => {
    const written = writes.get(key);
    if (written !== undefined) return written ?? undefined;
    if (!fetched.has(key)) throw new RowNotFetched(key);
    return fetched.get(key);
  };
  const serverOnly = (what: string) => () => {
    throw new Error(`${what} runs only on the server; use tx.get/insert/update/upsert/delete`);
  };
  return {
    claims: { userID: options.userID },
    clientID: tx.clientID,
    get: (table, key) => {
      const row = read(rowKey(options.schema, table, key));
      return row && { ...row };
    },
    insert: (table, row) => {
      const key = rowKey(options.schema, table, row);
      if (read(key)) throw new MutatorError(`${key} already exists`);
      writes.set(key, structuredClone(row));
    },
    update: (table, row) => {
      const key = rowKey(options.schema, table, row);
      const current = read(key);
      if (!current) return false;
      writes.set(key, { ...current, ...structuredClone(row) });
      return true;
    },
    upsert: (table, row) => {
      const key = rowKey(options.schema, table, row);
      writes.set(key, { ...read(key), ...structuredClone(row) });
    },
    delete: (table, key) => {
      const id = rowKey(options.schema, table, key);
      const existed = read(id) !== undefined;
      writes.set(id, null);
      return existed;
    },
    query: serverOnly("tx.query"),
    exec: serverOnly("tx.exec"),
    defer: () => {},
  };
}

/** `<table>/<pk>` as weir's Replicache dialect names a row; a one-column key is used as is. */
function rowKey(schema: KeySchema, table: string, key: RowKey | Row): string {
  const primaryKey = schema.tables[table]?.primaryKey;
  if (!primaryKey) throw new Error(`unknown table ${table}`);
  if (primaryKey.length !== 1) throw new Error(`${table}: only one-column primary keys are supported here`);
  const value = typeof key === "object" ? (key as Row)[primaryKey[0]!] : key;
  if (typeof value !== "string" && typeof value !== "number" && typeof value !== "bigint") {
    throw new MutatorError(`${table}: missing primary key ${primaryKey[0]}`);
  }
  return `${table}/${value}`;
}
