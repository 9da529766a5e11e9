#!/bin/bash
# usage: pack_test.sh PACKAGE_FILES...
# `npm pack` of //wasm:package installed offline into a scratch project, then
# pack_test.mjs imports it there as a user would.
set -euo pipefail
for f in "$@"; do
  if [[ "$f" == */package.json ]]; then package_dir="$(dirname "$f")"; fi
done
work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/pack.XXXXXX")"
# npm must not write to (or read) the user's cache or config.
export npm_config_cache="$work/npm-cache" npm_config_userconfig="$work/npmrc"
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
cp -rL "$package_dir" "$work/package"
(cd "$work/package" && npm pack --silent --pack-destination "$work" >/dev/null)
tarball="$(ls "$work"/blueprinting-*.tgz)"
mkdir "$work/project"
(cd "$work/project" && echo '{"name": "scratch", "private": true, "type": "module"}' > package.json &&
  npm install --offline --silent "$tarball")
cp tests/wasm_package/pack_test.mjs "$work/project/"
cd "$work/project" && exec /usr/bin/node pack_test.mjs "$tarball"
