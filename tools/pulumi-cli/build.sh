#!/usr/bin/env bash
# Prints the path of a Pulumi CLI the tests can run, building it when needed.
#
# 1. `pulumi` on PATH (the official CLI a user installed) is used as it is.
# 2. Otherwise the CLI is built from its Go module, github.com/pulumi/pulumi/pkg/v3 (cmd/pulumi), at the version that
#    node_modules/@pulumi/pulumi declares, into a cache outside the work tree keyed by that version:
#    ${LACCHAIN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lacchain-besu-node}/pulumi-cli/v<version>/bin/pulumi
#    (the layout the Automation API's PulumiCommand.get({ root }) expects).
#    A warm cache builds nothing; a cold build takes about 5 minutes on 2 cores. Needs Go 1.25 or newer.
#
# Exit codes: 0 the path is printed; 3 no CLI and no way to build one (the reason is printed on stderr).
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "${LACCHAIN_PULUMI_BUILD:-}" != "always" ] && command -v pulumi >/dev/null 2>&1; then
  command -v pulumi
  exit 0
fi

version=$(node -p "require('@pulumi/pulumi/package.json').version" 2>/dev/null) || {
  echo "no Pulumi CLI: node_modules/@pulumi/pulumi is not installed (run npm install)" >&2
  exit 3
}
cache="${LACCHAIN_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/lacchain-besu-node}/pulumi-cli/v${version}"
if [ -x "$cache/bin/pulumi" ]; then
  echo "$cache/bin/pulumi"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "no Pulumi CLI: pulumi is not on PATH and Go (1.25 or newer) is not installed to build it" >&2
  exit 3
fi
go_version=$(go env GOVERSION | sed 's/^go//')
if ! printf '%s\n%s\n' "1.25" "$go_version" | sort -V -C; then
  echo "no Pulumi CLI: pulumi is not on PATH and Go ${go_version} is older than 1.25, which its build needs" >&2
  exit 3
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The Go module proxy's checksum database is not reachable everywhere, and `direct` means git over the internet.
export GOSUMDB=off GOFLAGS=-mod=mod CGO_ENABLED=0
export GOPROXY="${LACCHAIN_GOPROXY:-https://proxy.golang.org}"
cat >"$work/go.mod" <<MOD
module lacchain.local/pulumi-cli

go 1.25

require (
	github.com/pulumi/pulumi/pkg/v3 v${version}
	github.com/pulumi/pulumi/sdk/v3 v${version}
)

// The same replacement as pkg/v3's own go.mod (replacements of a dependency do not apply to its dependants).
replace github.com/atotto/clipboard => github.com/tgummerer/clipboard v0.0.0-20241001131231-d02d263e614e
MOD
cat >"$work/tools.go" <<'GO'
//go:build tools

package tools

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
GO
echo "building the Pulumi CLI v${version} from its Go module into ${cache} (about 5 minutes cold)" >&2
mkdir -p "$cache/bin"
(
  cd "$work"
  go build -trimpath -tags osusergo,grpcnotrace \
    -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v${version}" \
    -o "$cache/bin/pulumi.partial" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
) >&2
mv "$cache/bin/pulumi.partial" "$cache/bin/pulumi"
echo "$cache/bin/pulumi"
