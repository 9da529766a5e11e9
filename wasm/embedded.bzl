"""The modules docs pages download (web/elements.js): built for size."""

load("//tools:build_defs.bzl", "bp_embind_module")

def embedded_module(name, srcs, deps, linkopts):
    """An embind module like the full one, compiled and linked at -Oz.

    Same factory name and guard (guard.js) as //wasm:blueprinting; visible to
    the site and the tests.
    """
    bp_embind_module(
        name = name,
        srcs = srcs,
        deps = deps,
        export_name = "createBlueprinting",
        linkopts = linkopts,
        optimize_size = True,
        post_js = ["guard.js"],
        visibility = [
            "//tests:__subpackages__",
            "//web:__pkg__",
        ],
    )
