// The weir server `pnpm bench isolation` measures: items and their tags, the named query of the
// report (items with a tag of a label, by id, four of them), a query no index can make cheap,
// and queries whose arguments a client chooses freely.
const label = (op, value) => ({
  type: "simple",
  op,
  left: { type: "column", name: "label" },
  right: { type: "literal", value },
});

const tagged = (parentField, childField, where) => ({
  table: "item",
  orderBy: [["id", "asc"]],
  limit: 4,
  where: {
    type: "correlatedSubquery",
    op: "EXISTS",
    related: {
      correlation: { parentField: [parentField], childField: [childField] },
      subquery: { table: "tag", where },
    },
  },
});

export default {
  schema: {
    tables: {
      item: { columns: { id: "string", kind: "string" }, primaryKey: ["id"] },
      tag: {
        columns: { id: "string", itemId: "string", kind: "string", label: "string" },
        primaryKey: ["id"],
      },
    },
  },
  mutators: {
    // `items` items of one kind, two tags each (labels x and y).
    seed(tx, { items }) {
      tx.exec(
        "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ?) " +
          "INSERT INTO item SELECT printf('i%06d', i), 'k' FROM n",
        [items],
      );
      tx.exec(
        "INSERT INTO tag SELECT 'a' || id, id, 'k', 'x' FROM item UNION ALL SELECT 'b' || id, id, 'k', 'y' FROM item",
      );
    },
    note(tx, { id }) {
      tx.upsert("item", { id, kind: "k" });
    },
    // A tag of no item, of any label.
    retag(tx, { id, label }) {
      tx.upsert("tag", { id, itemId: "none", kind: "k", label });
    },
  },
  queries: {
    tagged: (args) => tagged("id", "itemId", label("=", args[0])),
    sameKind: (args) => tagged("kind", "kind", label("LIKE", args[0])),
    // Every item of kind k (all of them), or with a tag of its kind the pattern passes: no probe
    // runs, but the EXISTS's witnesses are read for every item, each a read of every tag.
    kindOrTagged: (args) => ({
      table: "item",
      orderBy: [["id", "asc"]],
      where: {
        type: "or",
        conditions: [
          {
            type: "simple",
            op: "=",
            left: { type: "column", name: "kind" },
            right: { type: "literal", value: "k" },
          },
          tagged("kind", "kind", label("LIKE", args[0])).where,
        ],
      },
    }),
    allItems: () => ({ table: "item", orderBy: [["id", "asc"]], limit: 10 }),
    everyItem: () => ({ table: "item", orderBy: [["id", "asc"]] }),
    // The first two tags whose label matches a pattern: a scan of every tag when no index narrows
    // it, which a change to a tag has evaluated again (a window is not brought up to date row by row).
    labelled: ([pattern]) => ({
      table: "tag",
      orderBy: [["id", "asc"]],
      limit: 2,
      where: label("LIKE", pattern),
    }),
    fromId: ([from]) => ({
      table: "item",
      orderBy: [["id", "asc"]],
      where: {
        type: "simple",
        op: ">=",
        left: { type: "column", name: "id" },
        right: { type: "literal", value: from },
      },
    }),
    byIds: (args) => ({
      table: "item",
      where: {
        type: "simple",
        op: "IN",
        left: { type: "column", name: "id" },
        right: { type: "literal", value: args },
      },
    }),
  },
  devAuth: true,
};
