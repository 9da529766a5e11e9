"""Rules that build C++ targets for the wasm32-emscripten platform.

Each rule reaches the wasm toolchain through a configuration transition on its
dependency, so a plain `bazel build //...` builds native and wasm targets
together. Users normally go through the macros in //tools:build_defs.bzl.
"""

# Starlark transitions may not set --incompatible_* flags, so
# --incompatible_enable_cc_toolchain_resolution is set globally in //:.bazelrc.
def _wasm_transition_impl(settings, attr):
    return {
        "//command_line_option:platforms": "//tools/emscripten:wasm32_emscripten",
        # A separate output folder (bazel-out/k8-opt-wasm-ST-<hash>), so that
        # native and wasm objects of the same target never overwrite each other.
        "//command_line_option:platform_suffix": "wasm",
    }

wasm_transition = transition(
    implementation = _wasm_transition_impl,
    inputs = [],
    outputs = [
        "//command_line_option:platforms",
        "//command_line_option:platform_suffix",
    ],
)

# The same, compiled and linked for size (-Oz, the toolchain's wasm_size
# feature) in an output folder of its own: modules that web pages download.
def _wasm_size_transition_impl(settings, attr):
    return {
        "//command_line_option:platforms": "//tools/emscripten:wasm32_emscripten",
        "//command_line_option:platform_suffix": "wasm-size",
        "//command_line_option:features": settings["//command_line_option:features"] +
                                          ["wasm_size"],
    }

wasm_size_transition = transition(
    implementation = _wasm_size_transition_impl,
    inputs = ["//command_line_option:features"],
    outputs = [
        "//command_line_option:platforms",
        "//command_line_option:platform_suffix",
        "//command_line_option:features",
    ],
)

_ALLOWLIST = {
    "_allowlist_function_transition": attr.label(
        default = "@bazel_tools//tools/allowlists/function_transition_allowlist",
    ),
}

def _wasm_module_impl(ctx):
    if bool(ctx.attr.binary) == bool(ctx.attr.size_binary):
        fail("give a wasm_module either binary or size_binary")
    tar = (ctx.files.binary or ctx.files.size_binary)[0]
    if not tar.basename.endswith(".tar"):
        fail("binary must be a cc_binary named NAME.tar, got " + tar.basename)
    stem = tar.basename[:-len(".tar")]
    if stem != ctx.label.name:
        fail("a wasm_module must be named like its cc_binary minus .tar")
    js = ctx.actions.declare_file(stem + (".mjs" if ctx.attr.es6 else ".js"))
    wasm = ctx.actions.declare_file(stem + ".wasm")
    ctx.actions.run_shell(
        inputs = [tar],
        outputs = [js, wasm],
        command = "tar -xf \"$1\" -C \"$2\" \"./$3\" \"./$4\"",
        arguments = [tar.path, js.dirname, js.basename, wasm.basename],
        mnemonic = "WasmUnpack",
        progress_message = "Unpacking wasm module %s" % ctx.label,
    )
    files = depset([js, wasm])
    return [DefaultInfo(files = files, runfiles = ctx.runfiles(transitive_files = files))]

wasm_module = rule(
    implementation = _wasm_module_impl,
    doc = "Unpacks NAME.js (or .mjs) + NAME.wasm from the wasm cc_binary NAME.tar " +
          "(see emcc_wrapper.sh).",
    attrs = dict({
        "binary": attr.label(cfg = wasm_transition),
        "size_binary": attr.label(
            cfg = wasm_size_transition,
            doc = "instead of binary: the cc_binary built for size (-Oz)",
        ),
        "es6": attr.bool(default = False, doc = "binary was linked with -sEXPORT_ES6=1"),
    }, **_ALLOWLIST),
)

def _wasm_files_impl(ctx):
    files = depset(transitive = [t[DefaultInfo].files for t in ctx.attr.srcs])
    return [DefaultInfo(files = files, runfiles = ctx.runfiles(transitive_files = files))]

wasm_files = rule(
    implementation = _wasm_files_impl,
    doc = "Forwards the files of srcs built for wasm (e.g. a -sSINGLE_FILE=1 .js).",
    attrs = dict({
        "srcs": attr.label_list(mandatory = True, cfg = wasm_transition),
    }, **_ALLOWLIST),
)
