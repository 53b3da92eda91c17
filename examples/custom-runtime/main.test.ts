import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

it("embeds the engine with sql.js: applies mutations once and answers pulls", () => {
  const output = execFileSync(process.execPath, [fileURLToPath(new URL("main.mjs", import.meta.url))], {
    encoding: "utf8",
  });
  const lines = output.trim().split("\n");
  expect(lines[0]).toBe("pushes: applied, applied, applied, applied, replay");
  const first = JSON.parse(lines[1]!.replace("pull from scratch: ", ""));
  expect(first).toEqual({
    cookie: 4,
    lastMutationIDChanges: { "tab-1": 4 },
    rowsPatch: [
      { op: "clear" },
      { op: "put", tableName: "note", value: { id: "n1", author: "ada", body: "Buy milk", pinned: true } },
    ],
  });
  expect(JSON.parse(lines[2]!.replace("pull when caught up: ", ""))).toEqual({ cookie: 4, unchanged: true });
  // A child process that compiles the engine: seconds on a loaded machine, not vitest's default 5.
}, 60_000);
