/**
 * The todo app's contract, shared by the server, the browser app and any Replicache client:
 * namespace `todo` (routes under `/todo/`), one table `todo`, rows keyed `todo/<id>`.
 */
export const NAMESPACE = "todo";

export const todoSchema = {
  tables: {
    todo: {
      columns: {
        id: "string",
        owner: "string",
        text: "string",
        done: "boolean",
        sort: "number",
      },
      primaryKey: ["id"],
    },
  },
} as const;

/** A todo as it travels: the wire form of a `todo` row, also the value under `todo/<id>`. */
export interface Todo {
  id: string;
  owner: string;
  text: string;
  done: boolean;
  sort: number;
}
