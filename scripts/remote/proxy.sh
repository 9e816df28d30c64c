#!/usr/bin/env bash
# Step 6 of provisioning a remote node: the reverse proxy serving the RPC over TLS on 443 (and, for writers, on 80)
# with a self-signed RSA certificate whose subject alternative names are CERT_SANS. The certificate is made again only
# when the names change. TLS 1.2 and 1.3 only.
# Parameters (environment): SITE_NAME, PROXY_SITE (nginx server blocks), TLS_CERTIFICATE and TLS_KEY (the files the
# server blocks name), CERT_SANS (e.g.
# "IP:203.0.113.10,DNS:localhost,IP:127.0.0.1"), CERT_CN, CERT_BITS, CERT_DAYS, DISABLE_DEFAULT_SITE (true|false).
set -euo pipefail
: "${SITE_NAME:?}" "${PROXY_SITE:?}" "${TLS_CERTIFICATE:?}" "${TLS_KEY:?}" "${CERT_SANS:?}" "${CERT_CN:?}" "${CERT_BITS:?}" "${CERT_DAYS:?}"
: "${DISABLE_DEFAULT_SITE:?}"

fail() { echo "proxy: $*" >&2; exit 1; }

install -d -m 0755 -o root -g root "$(dirname "$TLS_CERTIFICATE")" "$(dirname "$TLS_KEY")"
certificate=$TLS_CERTIFICATE
private_key=$TLS_KEY
names_file="$TLS_CERTIFICATE.names"

if [ ! -s "$certificate" ] || [ ! -s "$private_key" ] || [ "$(cat "$names_file" 2>/dev/null)" != "$CERT_SANS" ]; then
  request=$(mktemp)
  trap 'rm -f "$request"' EXIT
  # A config file rather than -addext, so OpenSSL 1.0 (Ubuntu 16.04, CentOS 7) works too.
  cat >"$request" <<CONF
[req]
distinguished_name = name
x509_extensions = extensions
prompt = no
[name]
CN = $CERT_CN
[extensions]
subjectAltName = $CERT_SANS
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature, keyEncipherment
extendedKeyUsage = serverAuth
CONF
  (umask 077 && openssl req -x509 -newkey "rsa:$CERT_BITS" -sha256 -nodes -days "$CERT_DAYS" \
    -keyout "$private_key.tmp" -out "$certificate.tmp" -config "$request" 2>/dev/null) \
    || fail "openssl could not make the certificate"
  chmod 0600 "$private_key.tmp"
  chmod 0644 "$certificate.tmp"
  mv -f "$private_key.tmp" "$private_key"
  mv -f "$certificate.tmp" "$certificate"
  printf '%s' "$CERT_SANS" >"$names_file"
  echo "proxy: made a self-signed certificate for $CERT_SANS"
fi

site="/etc/nginx/conf.d/$SITE_NAME.conf"
if [ ! -f "$site" ] || [ "$(cat "$site")" != "$(printf '%s' "$PROXY_SITE")" ]; then
  printf '%s\n' "$PROXY_SITE" >"$site.tmp"
  mv -f "$site.tmp" "$site"
  echo "proxy: wrote $site"
fi
if [ "$DISABLE_DEFAULT_SITE" = true ] && [ -e /etc/nginx/sites-enabled/default ]; then
  # The distribution's default site listens on 80, which a writer's proxy needs.
  rm -f /etc/nginx/sites-enabled/default
  echo "proxy: disabled the default nginx site (port 80 serves the writer's proxy)"
fi

nginx -t 2>&1 | sed 's/^/proxy: /' || fail "nginx refuses the configuration"
systemctl enable nginx >/dev/null 2>&1
if systemctl is-active --quiet nginx; then systemctl reload nginx; else systemctl start nginx; fi
echo "proxy: ok"
