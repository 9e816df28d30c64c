#!/usr/bin/env bash
# The firewall step of provisioning a remote node: open the node's ports where a host firewall is active (ufw or firewalld).
# Nothing is changed when no firewall is active.
# Parameters (environment): TCP_PORTS and UDP_PORTS (space-separated port numbers).
set -euo pipefail
: "${TCP_PORTS:?}" "${UDP_PORTS:?}"

if command -v ufw >/dev/null 2>&1 && ufw status 2>/dev/null | grep -q '^Status: active'; then
  for port in $TCP_PORTS; do ufw allow "$port/tcp" >/dev/null; done
  for port in $UDP_PORTS; do ufw allow "$port/udp" >/dev/null; done
  echo "firewall: ufw allows tcp $TCP_PORTS and udp $UDP_PORTS"
elif command -v firewall-cmd >/dev/null 2>&1 && firewall-cmd --state >/dev/null 2>&1; then
  for port in $TCP_PORTS; do firewall-cmd --quiet --permanent --add-port="$port/tcp"; done
  for port in $UDP_PORTS; do firewall-cmd --quiet --permanent --add-port="$port/udp"; done
  firewall-cmd --quiet --reload
  echo "firewall: firewalld allows tcp $TCP_PORTS and udp $UDP_PORTS"
else
  echo "firewall: no active host firewall (ufw or firewalld): nothing to open"
fi
