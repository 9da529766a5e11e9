// Types of blueprinting.mjs (the embind module built from wasm/bindings.cc).
// Keep in sync with the EMSCRIPTEN_BINDINGS block there.

/** Options passed to the emscripten factory; all optional. */
export interface BlueprintingOptions {
  /** The module's .wasm bytes; read from beside the .mjs when omitted. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Where to fetch the .wasm from in a browser (default: beside the .mjs). */
  locateFile?: (path: string, scriptDirectory: string) => string;
  print?: (text: string) => void;
  printErr?: (text: string) => void;
}

/** One instance of the module; every call to createBlueprinting() makes a new one. */
export interface Blueprinting {
  /** "blueprinting <version>", the version of package.json. */
  version(): string;
  /** "pmath-fnv1a64 <hex>": a digest that is identical natively and in wasm. */
  digestDemo(): string;
}

/** Instantiates the module (browsers and node alike). */
export default function createBlueprinting(options?: BlueprintingOptions): Promise<Blueprinting>;
