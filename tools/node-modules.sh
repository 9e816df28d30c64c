#!/usr/bin/env bash
# tools/node-modules.sh — the project's npm packages in node_modules, as `npm install --no-audit --no-fund` installs
# them, for CI (.ci/run): copied from a cache outside the work tree when one was made from the same package.json,
# package-lock.json, Node and machine, else installed by npm and then kept there for the next run.
#
# A fresh clone's npm install takes about 21 s and 30 s of a core (671 packages, most of it unpacking and writing
# them); the copy about 2 s and 1.3 s. Only the newest copy is kept (about 430 MB). npm's own `prepare` (the build in
# bin/) is left to the test command, which builds when the build is missing or older than the sources (tests/run.sh).
# LACCHAIN_NO_MODULES_CACHE=1 installs with npm whatever the cache holds.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tools/lib/cache.sh
. tools/lib/cache.sh

key=$(cat package.json package-lock.json <(node --version) <(uname -m) | sha256sum | cut -c1-16)
cache=$(tool_cache node-modules)
copy="$cache/$key"

if [ "${LACCHAIN_NO_MODULES_CACHE:-}" != 1 ] && [ -f "$copy/.complete" ] && [ ! -e node_modules ]; then
  if cp -a "$copy/node_modules" node_modules; then
    echo "node_modules: copied from $copy (package.json and package-lock.json as when it was installed)"
    exit 0
  fi
  rm -rf node_modules
  echo "node_modules: the copy in $copy could not be made here: installing with npm" >&2
fi

npm install --no-audit --no-fund
[ "${LACCHAIN_NO_MODULES_CACHE:-}" != 1 ] || exit 0
# Kept for the next run: made beside the cache, then put in place in one rename; older copies removed.
mkdir -p "$cache"
making=$(mktemp -d "$cache/.making.XXXXXX")
if cp -a node_modules "$making/node_modules" && touch "$making/.complete"; then
  find "$cache" -mindepth 1 -maxdepth 1 -not -name "$(basename "$making")" -exec rm -rf {} +
  mv "$making" "$copy"
else
  rm -rf "$making"
  echo "node_modules: could not keep a copy in $cache (the next run installs with npm again)" >&2
fi
