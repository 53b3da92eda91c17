// The page is the todo example's own (the same client, schema and mutators): copy its built
// files beside the server entry, which serves dist/public as is.
import { cp } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const todo = dirname(createRequire(import.meta.url).resolve("@weir/example-todo/package.json"));
await cp(join(todo, "dist", "public"), join(root, "dist", "public"), { recursive: true });
