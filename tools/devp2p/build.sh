#!/usr/bin/env bash
# Prints the path of go-ethereum's `devp2p` tool (cmd/devp2p: `devp2p rlpx ping <enode>` and the discovery v4 checks),
# another implementation of the devp2p layer the tests check the stack's enodes with, building it when needed from the
# Go module proxy at the go-ethereum version the Besu stand-in's p2p program pins (tests/fixtures/besu-standin/p2p/go.mod),
# statically, into a cache outside the work tree keyed by that version:
#   ${LACCHAIN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lacchain-besu-node}/devp2p/<version>/devp2p
# A warm cache builds nothing; cold about 100 s on 2 cores.
#
# `--check`: builds nothing; prints the path when it is built, else says so (exit 3).
# Exit codes: 0 the path is printed; 3 not built and no way to build it (the reason is printed on stderr).
set -euo pipefail
cd "$(dirname "$0")/../.."

# shellcheck source=tools/lib/cache.sh
. tools/lib/cache.sh
version=$(sed -n 's#^require github.com/ethereum/go-ethereum \(v[0-9.]*\)$#\1#p' tests/fixtures/besu-standin/p2p/go.mod)
# A module of its own that requires go-ethereum at that version, whose cmd/devp2p is built (about 100 s cold).
module() {
  printf 'module lacchain.local/devp2p\n\ngo 1.25\n\nrequire github.com/ethereum/go-ethereum %s\n' "$version" >"$1/go.mod"
  printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/ethereum/go-ethereum/cmd/devp2p"\n' >"$1/tools.go"
}
go_program "$(tool_cache "devp2p/${version}")/devp2p" "go-ethereum's devp2p tool (${version})" \
  "go-ethereum's devp2p tool is not built yet (tests/setup.sh builds it: bash tools/devp2p/build.sh)" \
  module github.com/ethereum/go-ethereum/cmd/devp2p "${1:-}"
