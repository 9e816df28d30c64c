# shellcheck shell=bash
# The helpers every step of provisioning a remote node may call. core/remote/shell.ts sends this file, byte for byte,
# inside each step's `{ … }` group before the step's own script: nothing is sourced from the machine's disk.
# Parameter (environment): STEP_NAME (the step's name, which starts its messages).

# fail MESSAGE...: says what went wrong, as the step, and stops it.
fail() {
  echo "$STEP_NAME: $*" >&2
  exit 1
}

# Whether write_file replaced a file (a step that restarts a service on a change reads it, and resets it first).
# write_file sets it instead of printing it: a command substitution would run it without `set -e`.
# shellcheck disable=SC2034 # read by the steps that restart on a change
changed=false

# remove_planted_symlink PATH: removes PATH when it is a symlink that root did not make (the service user planted it
# while it could still write there), so root never follows it. The operator's own (root's) symlinks are kept.
remove_planted_symlink() {
  if [ -L "$1" ] && [ "$(stat -c %u "$1")" != 0 ]; then
    rm -f "$1"
    echo "$STEP_NAME: removed a symlink $1 that root did not make"
  fi
}

# write_file PATH MODE OWNER CONTENT: as root, in a folder only root can write: replaces PATH atomically when CONTENT
# differs (the file ends with one newline), and then sets `changed`. A symlink at PATH is replaced, never followed.
write_file() {
  local path=$1 mode=$2 owner=$3 content tmp
  content=$(printf '%s' "$4")
  remove_planted_symlink "$path"
  if [ -f "$path" ] && [ ! -L "$path" ] && [ "$(cat "$path")" = "$content" ]; then
    chmod "$mode" "$path"
    chown -h "$owner" "$path"
    return
  fi
  tmp=$(mktemp "$path.XXXXXX")
  printf '%s\n' "$content" >"$tmp"
  chmod "$mode" "$tmp"
  chown -h "$owner" "$tmp"
  mv -f "$tmp" "$path"
  echo "$STEP_NAME: wrote $path"
  # shellcheck disable=SC2034 # read by the steps that restart on a change
  changed=true
}

# as_service_user FUNCTION ARGS...: runs one of the step's functions as SERVICE_USER (standard input passed on), so
# nothing root does in the service user's folders can be redirected by a symlink planted there.
as_service_user() {
  local function=$1
  shift
  runuser -u "$SERVICE_USER" -- bash -c "set -euo pipefail; $(declare -f "$function"); $function \"\$@\"" "$function" "$@"
}
