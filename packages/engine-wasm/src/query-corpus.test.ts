import { describe, expect, it } from "vitest";
import { DATABASES, testEngine } from "../test/databases.js";
import { corpus, corpusSchema, corpusVisibility, expectedNode } from "../test/zero-corpus.js";

// Every case of the Zero corpus, on both SQLite drivers: the engine's statement for the case's
// AST, read through the app's permissions as visibility filters, holds exactly the root rows
// Zero answered.
describe.each(DATABASES)("the Zero query corpus on $kind", ({ open }) => {
  const schema = corpusSchema();
  const namespaces = new Map<string, ReturnType<typeof open>>();

  async function namespace(ns: string) {
    const engine = await testEngine();
    let db = namespaces.get(ns);
    if (!db) {
      db = open();
      const opened = db;
      opened.transaction(() => {
        engine.install(opened.adapter, schema);
        for (const sql of corpus.seed[ns]!) opened.adapter.exec(sql, []);
        engine.commit(opened.adapter);
      });
      namespaces.set(ns, db);
    }
    return { engine, db };
  }

  it.each(
    corpus.cases.map((testCase, i) => ({
      ...testCase,
      label: `${i} ${testCase.name} ${JSON.stringify(testCase.args)} as ${testCase.user}`,
    })),
  )("$label", async (testCase) => {
    const { engine, db } = await namespace(testCase.ns);
    const node = expectedNode(testCase);
    const ids = engine
      .queryRows(db.adapter, testCase.ast, { visibility: corpusVisibility(testCase.user) })
      .filter((row) => row.node === node)
      .map((row) => row.key.join("/"));
    expect(ids.sort()).toEqual([...testCase.expect].sort());
  });
});
