/**
 * Where the compiled engine ships inside this package; read it with `fs` where there is one.
 * A runtime whose modules have no URL (a Worker, where the `.wasm` is imported as a module
 * instead) gets a placeholder rather than failing at import.
 */
export const engineWasmUrl: URL = packagedWasmUrl();

function packagedWasmUrl(): URL {
  try {
    return new URL("../build/engine.wasm", import.meta.url);
  } catch {
    return new URL("weir-engine:engine.wasm");
  }
}
