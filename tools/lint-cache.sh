#!/usr/bin/env bash
# tools/lint-cache.sh restore|keep — the type-check's and the lint's caches (node_modules/.cache/lacchain-lint, written by
# `npm run build` and `npm run lint`) carried from one CI run to the next, outside the work tree (.ci/run).
#
# tsc (--incremental) and eslint (--cache, by each file's content) check again only what changed since the run that
# wrote the cache, and decide that themselves: a changed compiler option, eslint configuration or file is checked anew;
# the format check (tools/formatCheck.js) keeps the digests of the files it found formatted. In a fresh clone every
# file is new to tsc and eslint: there `npm run build` and `npm run lint` took 44 s of a core, with the last run's
# caches 14 s (tests/README.md, "CPU, not waiting"). tsc records the files relative to its cache file and the format
# check records no path, so theirs fit any clone; eslint records each file's full path, which `restore` changes to this
# clone's folder.
#
# Kept by what makes the tools and their configuration: package-lock.json (their versions), the configuration files and
# Node. Only the newest is kept. A failed copy only costs the time the caches save. LACCHAIN_NO_MODULES_CACHE=1 (the same
# switch as the npm packages' copy, tools/node-modules.sh) neither restores nor keeps them.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=tools/lib/cache.sh
. tools/lib/cache.sh

[ "${LACCHAIN_NO_MODULES_CACHE:-}" != 1 ] || exit 0
here=node_modules/.cache/lacchain-lint
key=$(cat package-lock.json tsconfig.json examples/tsconfig.json eslint.config.mjs <(node --version) | sha256sum | cut -c1-16)
cache=$(tool_cache lint)
kept="$cache/$key"

case "${1:-}" in
  restore)
    [ -f "$kept/.complete" ] && [ -d node_modules ] || exit 0
    mkdir -p "$here"
    # tsc's and the format check's hold no folder.
    cp "$kept"/*.tsbuildinfo "$kept/formatted" "$here"/ 2>/dev/null || true
    # eslint's cache names each file by its full path: the folder the run that kept it had, made this one's.
    if [ -f "$kept/eslint" ]; then
      # shellcheck disable=SC2016 # JavaScript for node, not the shell's
      node -e '
        const fs = require("fs");
        const [from, to, source, target] = process.argv.slice(1);
        const quoted = (folder) => JSON.stringify(`${folder}/`).slice(0, -1);
        fs.writeFileSync(target, fs.readFileSync(source, "utf8").split(quoted(from)).join(quoted(to)));
      ' "$(cat "$kept/folder")" "$PWD" "$kept/eslint" "$here/eslint" || rm -f "$here/eslint"
    fi
    ;;
  keep)
    [ -d "$here" ] || exit 0
    mkdir -p "$cache"
    making=$(mktemp -d "$cache/.making.XXXXXX")
    if cp "$here"/* "$making"/ && printf '%s' "$PWD" >"$making/folder" && touch "$making/.complete"; then
      find "$cache" -mindepth 1 -maxdepth 1 -not -name "$(basename "$making")" -exec rm -rf {} +
      mv "$making" "$kept"
    else
      rm -rf "$making"
    fi
    ;;
  *)
    echo "tools/lint-cache.sh: given \"${1:-}\"; allowed: restore (before the tests) or keep (after them), e.g. bash tools/lint-cache.sh restore" >&2
    exit 2
    ;;
esac
