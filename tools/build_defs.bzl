"""Build macros shared by every Blueprinting package.

  BP_COPTS           warnings for the project's own C++ (native gcc and emscripten clang)
  bp_cc_test         a GoogleTest suite, run natively AND compiled to wasm under node
  bp_wasm_node_binary  a cc_binary compiled to one self-contained .js for node
  bp_embind_module   an embind ES module (NAME.mjs + NAME.wasm) for browsers and node
  bp_dir             copies files into one output folder (npm package, static site),
                     optionally with content-hashed copies and their manifest

-ffp-contract=off and -std=c++17 are global (//:.bazelrc and the wasm toolchain).
"""

load(
    "//tools/emscripten:wasm.bzl",
    _wasm_files = "wasm_files",
    _wasm_module = "wasm_module",
)

BP_COPTS = [
    "-Wall",
    "-Wextra",
    "-Wno-unused-parameter",
    "-Wno-missing-field-initializers",
    # Exhaustive switches over enums are part of the design (no default: labels).
    "-Werror=switch",
    "-Werror=return-type",
    "-Werror=implicit-fallthrough",
    # absl::Status and StatusOr are [[nodiscard]]: a dropped error is a bug.
    "-Werror=unused-result",
    "-Werror=uninitialized",
]

# Only buildable with the emscripten toolchain (reached through wasm.bzl's
# transition); "manual" keeps it out of //... in the native configuration.
_WASM_ONLY = ["@platforms//cpu:wasm32"]

# One self-contained .js (the .wasm inlined) that node runs like a native program:
# exit code = main's return value, real file system (so `data` paths and the
# working directory are the same as natively), stdout byte-exact.
_NODE_PROGRAM_LINKOPTS = [
    "-sSINGLE_FILE=1",
    "-sENVIRONMENT=node",
    "-sEXIT_RUNTIME=1",
    "-sNODERAWFS=1",
    "-sALLOW_MEMORY_GROWTH=1",
]

def bp_wasm_node_binary(name, srcs, deps, copts = [], linkopts = [], testonly = False, visibility = None):
    """Compiles a C++ program to wasm as `NAME.js`, run with `node NAME.js ARGS...`.

    `:NAME` is the .js built for wasm (use it in data and $(rootpath :NAME)).
    """
    native.cc_binary(
        name = name + ".js",
        srcs = srcs,
        deps = deps,
        copts = BP_COPTS + copts,
        linkopts = _NODE_PROGRAM_LINKOPTS + linkopts,
        target_compatible_with = _WASM_ONLY,
        testonly = testonly,
        tags = ["manual"],
    )
    _wasm_files(
        name = name,
        srcs = [":" + name + ".js"],
        testonly = testonly,
        visibility = visibility,
    )

def bp_cc_test(name, srcs, deps, data = [], size = "small", args = [], copts = [], tags = []):
    """A C++ test run twice: natively (`NAME`) and compiled to wasm under node (`NAME_wasm`).

    Both run in the test's runfiles folder with the same `args`, and both see
    `data` at the same relative paths (the wasm build uses node's real file
    system). A failing test fails both. Sources must not use threads or
    exceptions (the wasm build has neither).
    """
    native.cc_test(
        name = name,
        srcs = srcs,
        deps = deps,
        data = data,
        size = size,
        args = args,
        copts = BP_COPTS + copts,
        tags = tags,
    )
    bp_wasm_node_binary(
        name = name + "_wasm_js",
        srcs = srcs,
        deps = deps,
        copts = copts,
        testonly = True,
    )
    native.sh_test(
        name = name + "_wasm",
        srcs = ["//tools/emscripten:run_node.sh"],
        args = ["$(rootpath :%s_wasm_js)" % name] + args,
        data = [":%s_wasm_js" % name] + data,
        size = size,
        tags = tags + ["wasm"],
    )

def bp_embind_module(name, srcs, deps, export_name, copts = [], linkopts = [], post_js = [], testonly = False, visibility = None, optimize_size = False):
    """An embind ES module: `NAME.mjs` + `NAME.wasm`, default export `export_name`.

    `await export_name()` resolves to the module in browsers and in node alike
    (under node the .wasm next to the .mjs is read from disk). The C++ side is a
    cc_binary `NAME.tar` built for wasm: add libraries to `deps`. `post_js`:
    JS files included with --post-js (inside the factory, after the runtime).
    `testonly`: a module only tests may depend on (e.g. with test-only bindings).
    `optimize_size`: compiled and linked at -Oz, every dependency included (an
    output folder of its own): for modules web pages download.
    """
    shim = "//tools/emscripten:node_esm_shim.js"
    pre = "//tools/emscripten:node_wasm_binary.js"
    post_js_opts = []
    for f in post_js:
        post_js_opts += ["--post-js", "$(location %s)" % f]
    native.cc_binary(
        name = name + ".tar",
        srcs = srcs,
        deps = deps,
        copts = BP_COPTS + copts,
        additional_linker_inputs = [shim, pre] + post_js,
        linkopts = [
            "-lembind",
            "-sMODULARIZE=1",
            "-sEXPORT_ES6=1",
            "-sEXPORT_NAME=" + export_name,
            "-sENVIRONMENT=web,node",
            "-sALLOW_MEMORY_GROWTH=1",
            # No eval or new Function (embind's invokers are closures instead):
            # the module runs under a Content-Security-Policy of
            # script-src 'self' 'wasm-unsafe-eval', as docs sites send.
            "-sDYNAMIC_EXECUTION=0",
            # A library must not install process-wide handlers in its host.
            "-sNODEJS_CATCH_EXIT=0",
            "-sNODEJS_CATCH_REJECTION=0",
            "--extern-pre-js",
            "$(location %s)" % shim,
            "--pre-js",
            "$(location %s)" % pre,
        ] + post_js_opts + linkopts,
        target_compatible_with = _WASM_ONLY,
        testonly = testonly,
        tags = ["manual"],
    )
    _wasm_module(
        name = name,
        binary = None if optimize_size else ":" + name + ".tar",
        size_binary = ":" + name + ".tar" if optimize_size else None,
        es6 = True,
        testonly = testonly,
        visibility = visibility,
    )

def _bp_dir_impl(ctx):
    pkg = ctx.label.package
    outs = []
    by_name = {}
    placed = [(f, None) for f in ctx.files.srcs]
    for target, folder in ctx.attr.folders.items():
        placed += [(f, folder) for f in target.files.to_list()]
    for f, folder in placed:
        # Files of this package keep their path below it; others (e.g. the wasm
        # module) land at the top of the folder, or in the one `folders` names.
        if folder != None:
            rel = folder + "/" + f.basename
        elif pkg and f.short_path.startswith(pkg + "/"):
            rel = f.short_path[len(pkg) + 1:]
        else:
            rel = f.basename
        out = ctx.actions.declare_file(ctx.label.name + "/" + rel)
        ctx.actions.run_shell(
            inputs = [f],
            outputs = [out],
            command = "cp -f \"$1\" \"$2\"",
            arguments = [f.path, out.path],
            mnemonic = "BpCopy",
            progress_message = "Copying %s into %s" % (f.short_path, ctx.label),
        )
        outs.append(out)
        by_name[rel] = out
    if ctx.attr.hashed:
        # Content-hashed copies in NAME/assets/ and NAME/manifest.json
        # (tools/hash_assets.py): names unknown until built, so one folder.
        assets = ctx.actions.declare_directory(ctx.label.name + "/assets")
        manifest = ctx.actions.declare_file(ctx.label.name + "/manifest.json")
        args = [assets.path, manifest.path]
        for prefix in ctx.attr.unhashed:
            args += ["--unhashed", prefix]
        inputs = []
        for name in ctx.attr.hashed:
            if name not in by_name:
                fail("hashed: %s is not a file of %s" % (name, ctx.label))
            args.append("%s=%s" % (name, by_name[name].path))
            inputs.append(by_name[name])
        ctx.actions.run(
            executable = "/usr/bin/python3",
            arguments = [ctx.file._hash_assets.path] + args,
            inputs = inputs + [ctx.file._hash_assets],
            outputs = [assets, manifest],
            mnemonic = "BpHashAssets",
            progress_message = "Hashing the assets of %s" % ctx.label,
        )
        outs += [assets, manifest]
    files = depset(outs)
    return [DefaultInfo(files = files, runfiles = ctx.runfiles(transitive_files = files))]

bp_dir = rule(
    implementation = _bp_dir_impl,
    doc = "Copies srcs into bazel-bin/<package>/<name>/ (package-relative paths kept).",
    attrs = {
        "srcs": attr.label_list(allow_files = True, mandatory = True),
        "folders": attr.label_keyed_string_dict(
            allow_files = True,
            doc = "more files: label -> the folder (below NAME/) its files land in",
        ),
        "hashed": attr.string_list(
            doc = "files of the folder (paths below NAME/) also copied to " +
                  "NAME/assets/ under content-hashed names, listed in " +
                  "NAME/manifest.json; dependencies first (their names are " +
                  "rewritten in later files)",
        ),
        "unhashed": attr.string_list(
            doc = "folders of NAME/ that hashed files refer to as './FOLDER'",
        ),
        "_hash_assets": attr.label(
            default = "//tools:hash_assets.py",
            allow_single_file = True,
        ),
    },
)
