/** The todo app's table, as the Node example declares it: rows keyed `todo/<id>` on the client. */
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
