/**
 * Where the compiled engine ships inside this package; read it with `fs` where there is one.
 * A runtime whose modules have no URL (a Worker, where the `.wasm` is imported as a module
 * instead) gets a placeholder rather than failing at import.
 */
export const engineWasmUrl: URL = packagedWasmUrl("engine.wasm");

/**
 * The lean engine: the same calls without the query engine (named queries, query-aware pulls),
 * for namespaces that define no named queries; a call that needs it answers `queries_disabled`.
 */
export const leanEngineWasmUrl: URL = packagedWasmUrl("engine-lean.wasm");

function packagedWasmUrl(file: string): URL {
  try {
    return new URL(`../build/${file}`, import.meta.url);
  } catch {
    return new URL(`weir-engine:${file}`);
  }
}
