// A Worker imports a `.wasm` file as an already compiled module (workerd refuses to compile bytes).
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}
