#!/bin/sh
# The start of a companion service that runs from a container image (the network's monitoring client) on a remote
# machine, installed as NODE_HOME/bin/start-container-companion.sh and run by the companion's systemd service. It runs
# the image, which the companions step pulled by its digest (it never pulls), in the foreground with podman: as USER,
# the companion's own system user (never Besu's: the nftables fences tell them apart, keeping it off the relay
# signer's port), on the machine's network (it reaches Besu's WebSocket on the loopback and the network's server),
# on a read-only root filesystem, without capabilities, and with nothing of the machine but STATE_DIR (its
# registration) mounted at STATE_MOUNT, which the environment variable STATE_VARIABLE names. Its output goes to the
# service's journal. A container of the same name left by a crash is replaced.
# Usage: start-container-companion.sh NAME USER STATE_DIR STATE_VARIABLE STATE_MOUNT IMAGE COMMAND [ARGUMENTS...]
set -eu

if [ "$#" -lt 7 ]; then
  echo "usage: start-container-companion.sh NAME USER STATE_DIR STATE_VARIABLE STATE_MOUNT IMAGE COMMAND [ARGUMENTS...]" >&2
  exit 64
fi
name=$1 user=$2 state=$3 variable=$4 mount=$5 image=$6 command=$7
shift 7
uid=$(id -u "$user")
gid=$(id -g "$user")
exec podman run --rm --replace --name "$name" --pull=never --network=host \
  --user "$uid:$gid" --read-only --cap-drop=all --security-opt=no-new-privileges \
  --log-driver=passthrough --env "$variable=$mount" --volume "$state:$mount:rw" \
  --entrypoint "$command" "$image" "$@"
