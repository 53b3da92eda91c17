/** Where the compiled engine ships inside this package; read it with `fs` where there is one. */
export const engineWasmUrl: URL = new URL("../build/engine.wasm", import.meta.url);
