import { boolean, createSchema, number, string, table } from "@rocicorp/zero";

/**
 * The todo app's table as Zero's client declares it: the same table, columns and key as the
 * server's schema (`todoSchema` of the todo example), which weir's Node host serves.
 */
const todo = table("todo")
  .columns({ id: string(), owner: string(), text: string(), done: boolean(), sort: number() })
  .primaryKey("id");

export const schema = createSchema({ tables: [todo] });
export type Schema = typeof schema;

/** What the client's mutators and queries know of their user (Zero's `context` option). */
export interface TodoContext {
  userID: string;
}

// Zero's builders take the app's schema and context from here (its documented registration).
declare module "@rocicorp/zero" {
  interface DefaultTypes {
    schema: Schema;
    context: TodoContext;
  }
}
