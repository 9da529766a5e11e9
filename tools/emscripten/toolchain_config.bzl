"""cc_toolchain_config for Debian's emscripten 3.1.6 (clang 14), Bazel 4.2 compatible."""

load("@bazel_tools//tools/build_defs/cc:action_names.bzl", "ACTION_NAMES")
load(
    "@bazel_tools//tools/cpp:cc_toolchain_config_lib.bzl",
    "feature",
    "flag_group",
    "flag_set",
    "tool_path",
    "with_feature_set",
)

_COMPILE_ACTIONS = [
    ACTION_NAMES.c_compile,
    ACTION_NAMES.cpp_compile,
    ACTION_NAMES.cpp_header_parsing,
    ACTION_NAMES.cpp_module_compile,
    ACTION_NAMES.preprocess_assemble,
    ACTION_NAMES.assemble,
]

_LINK_ACTIONS = [
    ACTION_NAMES.cpp_link_executable,
    ACTION_NAMES.cpp_link_dynamic_library,
    ACTION_NAMES.cpp_link_nodeps_dynamic_library,
]

def _flags(actions, flags, mode = None, not_features = []):
    return flag_set(
        actions = actions,
        flag_groups = [flag_group(flags = flags)],
        with_features = [with_feature_set(
            features = [mode],
            not_features = not_features,
        )] if mode else [],
    )

def _impl(ctx):
    tool_paths = [
        tool_path(name = "gcc", path = "emcc_wrapper.sh"),
        tool_path(name = "cpp", path = "emcc_wrapper.sh"),
        tool_path(name = "ld", path = "emcc_wrapper.sh"),
        tool_path(name = "ar", path = "emar_wrapper.sh"),
        tool_path(name = "nm", path = "/usr/bin/llvm-nm-14"),
        tool_path(name = "objdump", path = "/usr/bin/llvm-objdump-14"),
        tool_path(name = "strip", path = "/usr/bin/llvm-strip-14"),
        tool_path(name = "gcov", path = "/bin/false"),
        tool_path(name = "objcopy", path = "/bin/false"),
        tool_path(name = "dwp", path = "/bin/false"),
    ]

    features = [
        feature(name = "opt"),
        feature(name = "dbg"),
        feature(name = "fastbuild"),
        # Set by wasm.bzl's size transition (a module docs pages download):
        # -Oz instead of -O3. Optimisation levels never change results here
        # (no FP contraction, no fast-math, one libm).
        feature(name = "wasm_size"),
        feature(
            name = "wasm_default_flags",
            enabled = True,
            flag_sets = [
                _flags(_COMPILE_ACTIONS, [
                    # Same arithmetic as native: never fuse a*b+c, no fast-math.
                    "-ffp-contract=off",
                    "-fno-fast-math",
                    # Reproducible outputs.
                    "-Wno-builtin-macro-redefined",
                    "-D__DATE__=\"redacted\"",
                    "-D__TIMESTAMP__=\"redacted\"",
                    "-D__TIME__=\"redacted\"",
                ]),
                # -O3: the page's search runs 3-6% faster than at -O2
                # (core/search/README.md); no FP reassociation either way.
                _flags(_COMPILE_ACTIONS, ["-O3", "-DNDEBUG"], "opt", ["wasm_size"]),
                _flags(_COMPILE_ACTIONS, ["-Oz", "-DNDEBUG"], "wasm_size"),
                _flags(_COMPILE_ACTIONS, ["-O0", "-g"], "dbg"),
                _flags(_LINK_ACTIONS, ["-O3"], "opt", ["wasm_size"]),
                _flags(_LINK_ACTIONS, ["-Oz"], "wasm_size"),
            ],
        ),
    ]

    return cc_common.create_cc_toolchain_config_info(
        ctx = ctx,
        features = features,
        cxx_builtin_include_directories = [
            "/usr/share/emscripten/cache/sysroot/include",
            "/usr/share/emscripten/system",
            "/usr/lib/llvm-14/lib/clang/14.0.6/include",
        ],
        toolchain_identifier = "emscripten-wasm32",
        host_system_name = "x86_64-unknown-linux-gnu",
        target_system_name = "wasm32-unknown-emscripten",
        target_cpu = "wasm32",
        target_libc = "musl",
        compiler = "emscripten",
        abi_version = "emscripten_3.1.6",
        abi_libc_version = "musl",
        tool_paths = tool_paths,
    )

emscripten_cc_toolchain_config = rule(
    implementation = _impl,
    attrs = {},
    provides = [CcToolchainConfigInfo],
)
