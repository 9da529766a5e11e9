#!/usr/bin/env python3
"""Serves a folder on 127.0.0.1 with the MIME types ES modules and wasm need.

usage: serve.py DIR [--port N] [--quiet] [--base /PATH/] [--csp POLICY] [--cache-assets]

Browsers refuse a module script served without a JavaScript type, and
WebAssembly.instantiateStreaming needs application/wasm; Python's defaults depend
on the machine's /etc/mime.types, so both are set here. --port 0 picks a free
port. The first line printed is "Serving DIR at http://127.0.0.1:PORT/BASE".
--base serves DIR below a sub-path (as a docs site hosts the bundle; anything
outside it is 404), --csp sends a Content-Security-Policy header with every
response (tests/browser/embed_test.mjs uses the one docs sites commonly send).
Everything is sent with Cache-Control: no-store (always the latest build),
except with --cache-assets the content-hashed files below assets/, which get
the lifetime README.md's "Hosting the bundle" recommends (a repeat visit then
reuses them, and Chromium its compiled WebAssembly: tests/browser/embed_bench.mjs).
"""

import argparse
import functools
import http.server
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".css": "text/css",
        ".html": "text/html",
        ".js": "text/javascript",
        ".json": "application/json",
        ".mjs": "text/javascript",
        ".svg": "image/svg+xml",
        ".wasm": "application/wasm",
    }

    def __init__(self, *args, quiet=False, base="/", csp=None, cache_assets=False, **kwargs):
        self._quiet = quiet
        self._base = base
        self._csp = csp
        self._cache_assets = cache_assets
        super().__init__(*args, **kwargs)

    def translate_path(self, path):
        if not path.startswith(self._base):
            # No file of DIR is reachable outside the base path.
            return "/nonexistent/" + path
        return super().translate_path("/" + path[len(self._base):])

    def end_headers(self):
        if self._cache_assets and self.path.startswith(self._base + "assets/"):
            # A hashed name never changes content.
            self.send_header("Cache-Control", "public, max-age=31536000, immutable")
        else:
            # Always serve the latest build.
            self.send_header("Cache-Control", "no-store")
        if self._csp:
            self.send_header("Content-Security-Policy", self._csp)
        super().end_headers()

    def log_message(self, fmt, *args):
        if not self._quiet:
            super().log_message(fmt, *args)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir")
    parser.add_argument("--port", type=int, default=8080)
    parser.add_argument("--quiet", action="store_true", help="no request log")
    parser.add_argument("--base", default="/", help="the sub-path DIR is served at")
    parser.add_argument("--csp", help="a Content-Security-Policy header to send")
    parser.add_argument("--cache-assets", action="store_true",
                        help="let browsers cache assets/ (content-hashed names) for a year")
    args = parser.parse_args()
    base = "/" + args.base.strip("/") + "/" if args.base.strip("/") else "/"

    handler = functools.partial(Handler, directory=args.dir, quiet=args.quiet, base=base,
                                csp=args.csp, cache_assets=args.cache_assets)
    http.server.ThreadingHTTPServer.allow_reuse_address = True
    try:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    except OSError as e:
        sys.exit(f"serve.py: cannot listen on 127.0.0.1:{args.port}: {e.strerror}")
    try:
        print(f"Serving {args.dir} at http://127.0.0.1:{server.server_address[1]}{base}",
              flush=True)
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
