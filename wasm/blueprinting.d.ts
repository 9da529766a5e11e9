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
  /**
   * The module's memory (at least 256 pages = 16 MiB initially). Default: a
   * new memory growing up to 2 GiB; pass a smaller `maximum` to cap it. A
   * call that runs out of memory returns an internal error (see CommandResult).
   */
  wasmMemory?: WebAssembly.Memory;
}

/**
 * What every command returns: `output` is byte-identical to the CLI's stdout
 * for the same inputs; `errors` are one per problem: `message` is the CLI's
 * stderr line without "error: ", `field` the path of the field it concerns
 * in the canonical spec (or the argument name, a Calculon file path such as
 * "sys.matrix", a flag, or "" when it concerns no one field), `code` what
 * kind of problem it is (see CommandError).
 *
 * No argument makes a command throw or trap; it returns ok=false instead:
 *   - an argument that is not a string (or, for `args`, not an array of
 *     strings): "<name>: expected a string, got <typeof>";
 *   - a string that is not well-formed UTF-16: "<name>: not well-formed
 *     UTF-16: lone surrogate U+D800 at index 12" (`args[i]` for array items);
 *   - a string over 16 MiB (its UTF-8 bytes; `args`: all items plus one byte
 *     each): "<name>: input is larger than the limit of 16777216 bytes (16 MiB)";
 *   - an array or object whose getters throw: "<method>: an argument could
 *     not be read: ...";
 *   - running out of memory, or a bug that traps: "internal error: <method>:
 *     out of memory; ...". The instance then refuses every later call with an
 *     internal error: create a new one with createBlueprinting().
 * Argument names: spec, figure, depth, app, exe, system, args, hf_config.
 * Quoted input in errors is at most 32 bytes, escaped (\xNN), valid UTF-8.
 */
export interface CommandError {
  field: string;
  message: string;
  /**
   * The kind of problem, for programs (the message is for people): one of
   * "syntax", "unknown_field", "missing_field", "wrong_type",
   * "unknown_choice", "out_of_range", "not_divisible", "inconsistent",
   * "unsupported", "too_large", "over_capacity" (analyze: the report is still
   * in `output`), "invalid_value" (anything else), "internal" (a bug or out of
   * memory) or "cancelled". metadata()'s error_codes lists them with their
   * meanings.
   */
  code: string;
}

export interface CommandResult {
  ok: boolean;
  output: string;
  errors: CommandError[];
  /**
   * Things worth knowing that are no error, one line each: the CLI prints
   * them on stderr as "note: <line>" (before the errors) and they never make
   * ok false. E.g. importMegatron lists the Megatron-LM flags it ignored.
   */
  notes: string[];
}

/** One instance of the module; every call to createBlueprinting() makes a new one. */
export interface Blueprinting {
  /** `blueprint check SPEC`: the program JSON (canonical spec + derived values). */
  check(specJson: string): CommandResult;
  /**
   * `blueprint canonical SPEC`: the spec in canonical form, every default
   * spelled out, without judging the rules (a spec that breaks one is still
   * given back); errors: the document's syntax, keys, types and names, each
   * naming its field. The page loads share links with it.
   */
  canonical(specJson: string): CommandResult;
  /** `blueprint analyze SPEC`: the report JSON (over-capacity mappings: ok=false, output still set). */
  analyze(specJson: string): CommandResult;
  /** `blueprint digest SPEC`: "<stage> <sha256>" per line. */
  digest(specJson: string): CommandResult;
  /**
   * `blueprint explain SPEC FIGURE [--depth N]`: the lineage chain of one report
   * figure; for an iteration or memory figure its first line is "name = formula
   * = formula with values = value". `depth` (an integer from 0 to
   * Number.MAX_SAFE_INTEGER; omitted: every level) stops the tree that many
   * levels below the figure; anything else (Infinity, NaN, a fraction, a
   * larger or negative number, a non-number) is refused with an error on
   * field "depth".
   */
  explain(specJson: string, figure: string, depth?: number): CommandResult;
  /**
   * `blueprint schedule SPEC [--json]`: the spec's concrete pipeline schedule,
   * simulated. `json` true gives the timeline JSON ({"format":
   * "blueprinting.pipeline_timeline/1", ..., "stages": [{"commands": [{"kind",
   * "microbatch", "chunk", "start", "end", "lineage"}]}]}); otherwise the
   * canonical text. A non-boolean `json` is refused on field "json".
   */
  schedule(specJson: string, json?: boolean): CommandResult;
  /** `blueprint calculon APP EXE SYS`: Calculon's stats JSON. */
  calculon(appJson: string, exeJson: string, sysJson: string): CommandResult;
  /** `blueprint import calculon APP EXE SYS`: the canonical spec JSON. */
  importCalculon(appJson: string, exeJson: string, sysJson: string): CommandResult;
  /**
   * `blueprint import megatron --system SYS [--hf-config CONFIG] -- ARGS...`:
   * the canonical spec JSON. `hfConfig` (optional) is a Hugging Face
   * config.json text: the model comes from it, and a model flag in `args`
   * overrides the config's (core/adapters/README.md); its errors have fields
   * "hf_config.<key>".
   */
  importMegatron(sysJson: string, args: string[], hfConfig?: string): CommandResult;
  /**
   * `blueprint search --procs N --max-batch B --datatype D ...`: `args` are the
   * CLI flags (add "--json" for JSON output, and "--specs" for each ranked
   * mapping's canonical spec under "spec"). Runs synchronously: call it from
   * a Web Worker; `progress` receives the fraction done. If `progress`
   * throws, it is not called again and its exception is rethrown once the
   * search has finished.
   */
  search(appJson: string, sysJson: string, args: string[],
         progress?: (fraction: number) => void): CommandResult;
  /**
   * Merges the outputs of a search run in N parts (each `search` with
   * "--json" and "--partition", "I/N": for N Web Workers, each with its own
   * module instance) into the output of the whole search, byte for byte:
   * the counts summed, the rankings merged in the search's order. Errors
   * name each part ("parts[i]...") that is not such an output, and a
   * missing, repeated or foreign part.
   */
  mergeSearch(parts: string[]): CommandResult;
  /**
   * `blueprint serve SPEC`: the serving analysis' canonical text
   * ("blueprinting.serving_analysis/1") of a serving spec
   * ("blueprinting.serving_spec/1", core/serving/README.md).
   */
  serve(specJson: string): CommandResult;
  /** `blueprint serve check SPEC`: the canonical serving spec, or the violations. */
  serveCheck(specJson: string): CommandResult;
  /**
   * `blueprint serve explain SPEC FIGURE`: one serving figure's value and
   * formula, then its sources down to the spec's and the system's values.
   */
  serveExplain(specJson: string, figure: string): CommandResult;
  /**
   * `blueprint search --serving --system SYS --hf-config CONFIG ARGS...`:
   * every serving mapping on --procs GPUs, best first. `sysJson` is a
   * Calculon system text and `hfConfig` a Hugging Face config.json text
   * (a preset's: presets()); `args` are the CLI's other flags (--procs,
   * --input-len, --output-len, --max-ttft, --max-tpot, --top, --json, ...).
   * Errors name their flag ("--procs", "--system", "--hf-config", ...).
   */
  searchServing(sysJson: string, hfConfig: string, args: string[]): CommandResult;
  /**
   * `blueprint metadata`: canonical JSON listing every enum's choices (name,
   * Calculon's spelling, meaning), every error code (name, meaning), every
   * report figure (unit: s, bytes, FLOP, bytes/s, fraction, count or
   * samples/s; group; the page's label or null; meaning; formula, or null
   * for a block figure) and every spec field (JSON type, kinds, choices,
   * the checker's min/max). See core/api/metadata.h.
   */
  metadata(): CommandResult;
  /**
   * `blueprint presets`: canonical JSON {"format": "blueprinting.presets/1",
   * "models": {name: Hugging Face config.json object}, "systems": {name:
   * Calculon system object}}, the presets shipped with the module (presets/).
   */
  presets(): CommandResult;
  /**
   * `blueprint validate ARGS`: predicted vs measured for every published run
   * of the built-in corpus (tests/validation/corpus.json); `args` are the
   * CLI's flags (--profile calculon|refined, --without CORRECTION, --json).
   */
  validate(args: string[]): CommandResult;
  /** "blueprinting <version>", the version of package.json. */
  version(): string;
}

/** Instantiates the module (browsers and node alike). */
export default function createBlueprinting(options?: BlueprintingOptions): Promise<Blueprinting>;
