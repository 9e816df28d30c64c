#!/usr/bin/env bash
# What the tests need on this machine, installed when missing (run by `npm test` and `.ci/run`; a warm machine
# installs and builds nothing):
# - as root, Debian's packages for the real SSH test host (debootstrap, systemd-nspawn, iproute2, ssh), shellcheck for
#   the remote scripts, python3 for the Besu stand-in's self-test, openssl and curl for the checks, and nginx with its
#   Lua module and cjson for the writer proxy's gas-model routing (tests/e2e/gasModelRouting.test.ts), nftables for
#   the relay signer's fence (tests/tools/companionsStep.test.ts), and prometheus for promtool (the alert rules'
#   checks and unit tests, tests/tools/alerts.test.ts) and for the Prometheus that scrapes the SSH test host
#   (tests/e2e/sshNode.test.ts); a JDK for the pods' metrics relay (tests/tools/metricsRelay.test.ts: run by the source
#   launcher, compiled for Java 11), unzip for the Prometheus Operator's CRDs; for the real worker of the kubelet tests
#   (tests/kubelet/), Debian's container runtime (containerd, runc, containernetworking-plugins), gcc and a static libc
#   for the pod sandbox's pause program, busybox-static for the shell of the test images (testing/cluster/images.ts),
#   and restic for their restic image (the pod's backup before a release change);
# - Go 1.25 or newer and the Pulumi CLI built from its Go module (tools/pulumi-cli/build.sh, cached by version
#   outside the work tree), unless `pulumi` is on PATH;
# - the Kubernetes provider the engine tests install as a plugin, built from its Go module
#   (tools/pulumi-kubernetes/build.sh, cached by version outside the work tree);
# - the Kubernetes control plane of the cluster tests, built from its Go modules (tools/kubernetes/build.sh, cached
#   by version outside the work tree), the Prometheus Operator's CRDs they install (tools/kubernetes/crds.sh), and
#   Prometheus and the Prometheus Operator built from their Go modules (tools/monitoring/build.sh);
# - the kubelet and the pause program of the kubelet tests' real worker, built from the same Go module as the control
#   plane (tools/kubernetes/build-kubelet.sh, cached by version outside the work tree), and its kube-proxy from the same
#   module (tools/kubernetes/build-kube-proxy.sh) and MetalLB's controller and speaker from theirs
#   (tools/metallb/build.sh), cached the same way;
# - the Besu stand-in's peer-to-peer program (tests/fixtures/besu-standin/p2p/build.sh, go-ethereum's p2p package,
#   cached by version outside the work tree), which pack.sh packs into the stand-in's releases, and go-ethereum's
#   devp2p tool that checks the enodes from outside (tools/devp2p/build.sh, cached by version the same way);
# - as root, a local route for the test stacks' public addresses (testing/testNetworks.ts).
# Without root or Go, the tests that need them say why they are skipped (under CI=true they fail instead).
set -euo pipefail
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive

# Runs "$@" and records how long it took, for the table of step times printed at the end (where a cold machine's
# set-up time went, and that a warm one builds nothing); a step that took longer than a few seconds also says so at
# once on stderr.
setup_started=$SECONDS
step_times=$(mktemp)
trap 'rm -f "$step_times"' EXIT
timed() {
  local label=$1 started=$SECONDS status=0
  shift
  "$@" || status=$?
  printf '%6d s  %s\n' $((SECONDS - started)) "$label" >>"$step_times"
  if [ $((SECONDS - started)) -gt 3 ]; then echo "tests/setup.sh: $label took $((SECONDS - started)) s" >&2; fi
  return "$status"
}

missing=()
for tool in debootstrap:debootstrap systemd-nspawn:systemd-container ip:iproute2 ssh:openssh-client \
  shellcheck:shellcheck python3:python3 openssl:openssl curl:curl nft:nftables unzip:unzip \
  javac:openjdk-17-jdk-headless containerd:containerd runc:runc gcc:gcc busybox:busybox-static restic:restic; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || missing+=("${tool#*:}")
done
[ -e /etc/ssl/certs/ca-certificates.crt ] || missing+=(ca-certificates)
[ -x /usr/sbin/nginx ] || missing+=(nginx-light)
# The kubelet tests' pod network (the bridge, host-local and loopback plugins) and the pause program's static libc.
[ -x /usr/lib/cni/bridge ] || missing+=(containernetworking-plugins)
compgen -G '/usr/lib/*/libc.a' >/dev/null || missing+=(libc6-dev)
[ -e /usr/lib/nginx/modules/ngx_http_lua_module.so ] || missing+=(libnginx-mod-http-lua)
compgen -G '/usr/lib/*/lua/5.1/cjson.so' >/dev/null || missing+=(lua-cjson)
# promtool checks and unit-tests the alert rules (tests/tools/alerts.test.ts), and prometheus scrapes the SSH test
# host with them (tests/e2e/sshNode.test.ts): Debian's prometheus package.
{ command -v promtool && command -v prometheus; } >/dev/null 2>&1 || missing+=(prometheus)
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "installing Debian packages: ${missing[*]}" >&2
    apt-get update -qq
    timed "Debian packages" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    # Installing nginx starts the system's nginx on port 80; the tests start their own, so stop the one just started.
    if [[ " ${missing[*]} " == *" nginx-light "* ]]; then nginx -s quit 2>/dev/null || true; fi
    # And the prometheus package starts its server; the tests need only promtool.
    if [[ " ${missing[*]} " == *" prometheus "* ]]; then
      systemctl stop prometheus 2>/dev/null || pkill -x prometheus 2>/dev/null || true
    fi
  else
    echo "not root: cannot install ${missing[*]}; the tests that need them are skipped" >&2
  fi
fi

# The test stacks' made-up public addresses kept on this machine (testing/testNetworks.ts: a local route on lo), so
# nothing a test sends to one leaves it, whichever test runs first.
if [ "$(id -u)" = 0 ]; then
  npx ts-node -T -e "require('./testing/testNetworks').keepTestPublicNetworkHere()" || echo "cannot keep the test addresses on this machine: the tests that use them will say so" >&2
fi

# The root file systems the SSH test hosts boot from, Debian 12's and 13's (testing/host/build-rootfs.sh: debootstrap,
# mostly waiting on the Debian mirror and dpkg), are built in the background while the Go builds below use the cores;
# the e2e tests would otherwise build them on their first host. Cached; a warm machine only checks their markers.
rootfs_log=$(mktemp)
rootfs_pid=
if [ "$(id -u)" = 0 ] && [ "${LACCHAIN_E2E_HOSTS:-1}" != 0 ] && command -v debootstrap >/dev/null 2>&1; then
  # (Its own messages go to a log, shown only when it fails; the time it took to this script's standard error.)
  # Then the disk with a writer's packages installed that the suites testing what comes after a first install boot
  # (testing/host/packagesDisk.ts: made by the real packages step on a Debian 12 host; cached, none warm).
  hosts_chain() {
    # shellcheck disable=SC2016 # expanded by the inner bash
    timed "the test hosts' root file systems (Debian 12 and 13)" bash -c \
      'LACCHAIN_TEST_SYSTEM=bookworm bash testing/host/build-rootfs.sh 2>"$1" && LACCHAIN_TEST_SYSTEM=trixie exec bash testing/host/build-rootfs.sh 2>>"$1"' \
      _ "$rootfs_log" || return 1
    if [ -d node_modules/ts-node ]; then
      timed "the packages-installed test host disk" \
        node -r ts-node/register/transpile-only testing/host/packagesDisk.ts >/dev/null 2>>"$rootfs_log"
    fi
  }
  hosts_chain &
  rootfs_pid=$!
fi

# Go 1.25 or newer builds the Pulumi CLI. Debian's golang-go is older: an older Go (1.21+) fetches a newer
# toolchain from the Go module proxy by itself when GOTOOLCHAIN names one.
if ! command -v pulumi >/dev/null 2>&1; then
  if ! command -v go >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing Debian's Go" >&2
    apt-get install -y -qq --no-install-recommends golang-go >/dev/null || true
  fi
  if command -v go >/dev/null 2>&1 && ! printf '1.25\n%s\n' "$(go env GOVERSION | sed 's/^go//')" | sort -V -C; then
    export GOTOOLCHAIN=go1.25.0 GOPROXY="${LACCHAIN_GOPROXY:-https://proxy.golang.org}" GOSUMDB=off
    go version >/dev/null || echo "cannot get Go 1.25: the Pulumi CLI tests are skipped" >&2
  fi
fi

# The Go builds go in two chains side by side: each build leaves a core idle while it downloads its modules and links
# (one thread), which the other chain's compiling then uses. Chain one: the Pulumi CLI, then the Kubernetes provider
# (pulumi-resource-kubernetes) of the engine tests (tests/engine/), built from its Go module into a cache outside the
# work tree (about 12 minutes cold on 2 cores, none warm), then MetalLB for the kubelet tests. Without Go the engine
# tests say why they are skipped (under CI=true they fail).
engine_chain() {
  if ! command -v pulumi >/dev/null 2>&1; then
    timed "the Pulumi CLI" bash tools/pulumi-cli/build.sh >/dev/null || true
  fi
  if command -v go >/dev/null 2>&1; then
    timed "the Kubernetes provider" bash tools/pulumi-kubernetes/build.sh >/dev/null || echo "cannot build the Kubernetes provider: the engine tests will say so" >&2
    # MetalLB, the kubelet tests' load balancer in layer 2 (go.universe.tf/metallb, about 3.5 minutes cold): in this
    # chain, the shorter of the two cold.
    timed "MetalLB" bash tools/metallb/build.sh >/dev/null || echo "cannot build MetalLB: the kubelet tests will say so" >&2
  fi
}
engine_chain &
engine_chain_pid=$!

# The Besu stand-in's peer-to-peer program (tests/fixtures/besu-standin/p2p: go-ethereum's p2p package, static), which
# pack.sh packs into every stand-in release the tests install: cached by version outside the work tree (about 25 s
# cold, none warm).
if command -v go >/dev/null 2>&1; then
  timed "the Besu stand-in's p2p program" bash tests/fixtures/besu-standin/p2p/build.sh >/dev/null || echo "cannot build the Besu stand-in's p2p program: the tests that run the stand-in will say so" >&2
  # go-ethereum's devp2p tool, which checks the nodes' enodes from outside (tools/devp2p/build.sh; about 100 s cold).
  timed "go-ethereum's devp2p tool" bash tools/devp2p/build.sh >/dev/null || echo "cannot build the devp2p tool: the enode checks will say so" >&2
fi

# The Kubernetes control plane of the cluster tests (tests/cluster/): kube-apiserver, kube-controller-manager,
# kube-scheduler, kubectl, etcd and kwok built from one Go module requiring k8s.io/kubernetes, etcd and kwok (what they
# share compiled once) into a cache outside the work tree (about 9 minutes cold on 2 cores, none warm). Without Go the cluster tests say why they are skipped (under CI=true they fail).
if command -v go >/dev/null 2>&1; then
  timed "the Kubernetes control plane" bash tools/kubernetes/build.sh >/dev/null || echo "cannot build the Kubernetes binaries: the cluster tests will say so" >&2
fi
# The kubelet of the kubelet tests' real worker, from the same module as the control plane (its Go build cache warm
# after it: about half a minute), and the pause program (tools/kubernetes/build-kubelet.sh; nothing warm).
if command -v go >/dev/null 2>&1; then
  timed "the kubelet" bash tools/kubernetes/build-kubelet.sh >/dev/null || echo "cannot build the kubelet: the kubelet tests will say so" >&2
  # The worker's kube-proxy, from the same module (its Go build cache warm after the control plane's: seconds).
  timed "kube-proxy" bash tools/kubernetes/build-kube-proxy.sh >/dev/null || echo "cannot build kube-proxy: the kubelet tests will say so" >&2
fi
timed "the Prometheus Operator's CRDs" bash tools/kubernetes/crds.sh >/dev/null || echo "cannot fetch the Prometheus Operator's CRDs: the cluster tests will say so" >&2
# Prometheus (upstream's, with the Kubernetes service discovery) and the Prometheus Operator for the cluster's
# monitoring tests, built from their Go modules (tools/monitoring/build.sh; about 8 minutes cold, none warm).
if command -v go >/dev/null 2>&1; then
  timed "Prometheus and its Operator" bash tools/monitoring/build.sh >/dev/null || echo "cannot build Prometheus and its Operator: the cluster tests will say so" >&2
fi

wait "$engine_chain_pid" || true
if [ -n "$rootfs_pid" ]; then
  wait "$rootfs_pid" || { tail -n 20 "$rootfs_log" >&2; echo "cannot build the test hosts' root file system: the e2e tests will say so" >&2; }
fi
rm -f "$rootfs_log"
{
  echo "tests/setup.sh: step times (the Go builds in two chains side by side, the root file system beside them):"
  sort -rn "$step_times"
  printf '%6d s  %s\n' $((SECONDS - setup_started)) "set-up in all"
} >&2
