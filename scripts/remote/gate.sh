#!/usr/bin/env bash
# The health gate of a node in a rollout (docs/upgrades.md, "Rolling out a change"): run after a `pulumi up` restarted
# the node, before the next node of the stack changes. It waits, until GATE_TIMEOUT seconds have passed, for the node
# to be healthy as `npm run node -- check` judges it: it answers net_enode with EXPECTED_ENODE, has a peer, is at most
# MAX_BLOCKS_BEHIND blocks behind the best block it knows, and its head advances past the head it had when the gate
# began; a validator (SIGNER_METRICS, the consensus API's getSignerMetrics) also proposes a block after that head.
# It passes with one line saying what it saw; it fails with one line naming the node, what was checked, what it saw
# last, and the commands to continue or go back (the nodes after it are not changed: the engine runs nothing that
# depends on a failed resource).
# Parameters (environment): NODE_NAME, STACK, NEXT_NODES (the nodes the rollout changes after this one, for the
# message), EXPECTED_ENODE, NODE_ADDRESS (the node's address, for its signer metrics), RPC_PORT, GATE_TIMEOUT (seconds),
# MAX_BLOCKS_BEHIND, SIGNER_METRICS (the method, or empty for a node that proposes no blocks or whose RPC does not
# serve it), CHANGE (a digest of what restarted the node, secret: it changes whenever the gate must run again, and
# is a function of the stack's secrets, so it is written nowhere and given to no command), ROLLOUT_RECORD (the file
# where the gate says how far it is, for `npm run node -- status`: root's, mode 0644, lines
# state=waiting|passed|failed, since=<epoch seconds the gate began>, until=<when it gives up>, seen=<what it saw last>).
set -euo pipefail
: "${NODE_NAME:?}" "${STACK:?}" "${EXPECTED_ENODE:?}" "${NODE_ADDRESS:?}" "${RPC_PORT:?}" "${GATE_TIMEOUT:?}"
: "${MAX_BLOCKS_BEHIND:?}" "${CHANGE:?}" "${ROLLOUT_RECORD:?}"
export -n CHANGE
SIGNER_METRICS=${SIGNER_METRICS:-}
NEXT_NODES=${NEXT_NODES:-}

# hex_field NAME: the value of "NAME":"0x…" in standard input (one line: rpc_ask's), as a decimal number, or nothing.
hex_field() {
  hex_number "$(sed -n "s/.*\"$1\"[[:space:]]*:[[:space:]]*\"\(0x[0-9a-fA-F]*\)\".*/\1/p" | head -n 1)"
}

# last_proposed: the last block the node proposed, from its signer metrics (the entry of NODE_ADDRESS), or nothing.
last_proposed() {
  local metrics
  rpc_ask "$SIGNER_METRICS" metrics
  printf '%s\n' "${metrics//[\{\}]/$'\n'}" | grep -i "\"$NODE_ADDRESS\"" | hex_field lastProposedBlockNumber || true
}

# The shape of an enode the node answers (its public key, then where it listens).
ENODE_SHAPE='^enode://[0-9a-f]{128}@[0-9A-Za-z.:_-]+$'

# record STATE SEEN: the gate's record (ROLLOUT_RECORD, in the node home, which only root writes), through write_file,
# only when it changes; its "wrote" line is not the gate's to say. SEEN is kept to one line of printable characters
# (at most 300): nothing the gate saw adds a line to the record.
recorded=""
record() {
  local content seen
  seen=$(printf '%s' "$2" | LC_ALL=C tr -c '[:print:]' ' ' | head -c 300)
  content=$(printf 'state=%s\nsince=%s\nuntil=%s\nseen=%s' "$1" "$since" "$((since + GATE_TIMEOUT))" "$seen")
  if [ "$content" != "$recorded" ]; then
    write_file "$ROLLOUT_RECORD" 0644 root:root "$content" >/dev/null
    recorded=$content
  fi
}

since=$(date +%s)
deadline=$((SECONDS + GATE_TIMEOUT))
began=""
answer=""
syncing=""
seen="it did not answer on 127.0.0.1:$RPC_PORT"
record waiting "$seen"
while :; do
  rpc_refused=""
  enode=$(rpc_result net_enode)
  rpc_ask net_peerCount answer
  peers=$(hex_field result <<<"$answer")
  rpc_ask eth_blockNumber answer
  head=$(hex_field result <<<"$answer")
  rpc_ask eth_syncing syncing
  # rpc_result's refusal is in its own subshell: its answer is asked again here to say why.
  if [ -z "$enode" ]; then rpc_ask net_enode answer; fi
  if [ -z "$began" ] && [ -n "$head" ]; then began=$head; fi
  behind=0
  highest=$(hex_field highestBlock <<<"$syncing")
  current=$(hex_field currentBlock <<<"$syncing")
  if [ -n "$highest" ] && [ -n "$current" ]; then behind=$((highest - current)); fi
  proposed=""
  if [ -n "$SIGNER_METRICS" ] && [ -n "$began" ]; then proposed=$(last_proposed); fi
  if [ -n "$rpc_refused" ]; then
    seen="127.0.0.1:$RPC_PORT gave $rpc_refused, which the node never gives (another program answers there?)"
  elif [ -z "$enode" ] || [ -z "$head" ]; then
    seen="it did not answer on 127.0.0.1:$RPC_PORT"
  elif ! [[ "$enode" =~ $ENODE_SHAPE ]]; then
    seen="it answers net_enode with something that is not an enode (another program on 127.0.0.1:$RPC_PORT?)"
  elif [ "$enode" != "$EXPECTED_ENODE" ]; then
    seen="it answers net_enode with $enode, not the stack's $EXPECTED_ENODE"
  elif [ "${peers:-0}" -lt 1 ]; then
    seen="it has no peer (is it permissioned? npm run node -- check says why)"
  elif [ "$behind" -gt "$MAX_BLOCKS_BEHIND" ]; then
    seen="it is $behind blocks behind the best block it knows (at most $MAX_BLOCKS_BEHIND)"
  elif [ "$head" -le "$began" ]; then
    seen="its head has not advanced from block $began"
  elif [ -n "$SIGNER_METRICS" ] && { [ -z "$proposed" ] || [ "$proposed" -le "$began" ]; }; then
    seen="it has proposed no block since block $began (its last: ${proposed:-none in $SIGNER_METRICS})"
  else
    healthy="its enode, $peers peers, head $head advancing, $behind blocks behind${proposed:+, proposed block $proposed}"
    record passed "$healthy"
    echo "gate: ok: node $NODE_NAME is healthy: $healthy"
    exit 0
  fi
  record waiting "$seen"
  if [ "$SECONDS" -ge "$deadline" ]; then break; fi
  sleep 1
done
record failed "$seen"
fail "node $NODE_NAME is not healthy after $GATE_TIMEOUT s (checked: its enode, a peer, at most $MAX_BLOCKS_BEHIND blocks behind, its head advancing${SIGNER_METRICS:+, a block proposed}): $seen. The rollout stops here${NEXT_NODES:+: $NEXT_NODES not changed}. Fix it (npm run node -- check --stack $STACK --node $NODE_NAME), then run pulumi up again to continue from here; or go back (npm run node -- rollback --stack $STACK --node $NODE_NAME, and set its release back)"
