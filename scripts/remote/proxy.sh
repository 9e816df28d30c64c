#!/usr/bin/env bash
# The proxy step of provisioning a remote node: the reverse proxy serving the RPC over TLS on 443 (and, for writers, on 80)
# with a self-signed RSA certificate whose subject alternative names are CERT_SANS. The certificate is made again only
# when the names change. TLS 1.2 and 1.3 only. A site file nginx refuses (nginx -t) is replaced by the previous one.
# Parameters (environment): SITE_NAME, PROXY_SITE (nginx server blocks), TLS_CERTIFICATE and TLS_KEY (the files the
# server blocks name), CERT_SANS (e.g. "IP:203.0.113.10,DNS:localhost,IP:127.0.0.1"), CERT_CN, CERT_BITS, CERT_DAYS,
# DISABLE_DEFAULT_SITE (true|false), and the labels of the two lines it prints last about the certificate in use
# (CERT_FINGERPRINT_LABEL, PUBLIC_KEY_PIN_LABEL: its SHA-256 fingerprint and its public key's pin, which the program
# makes the node's outputs). Without a metrics endpoint, STALE_TOKEN_CHECK_FILE names the endpoint's token check a
# former run may have left: removed once nginx runs the site without it.
set -euo pipefail
: "${SITE_NAME:?}" "${PROXY_SITE:?}" "${TLS_CERTIFICATE:?}" "${TLS_KEY:?}" "${CERT_SANS:?}" "${CERT_CN:?}" "${CERT_BITS:?}" "${CERT_DAYS:?}"
: "${DISABLE_DEFAULT_SITE:?}" "${CERT_FINGERPRINT_LABEL:?}" "${PUBLIC_KEY_PIN_LABEL:?}"

certificate=$TLS_CERTIFICATE
private_key=$TLS_KEY
names_file="$TLS_CERTIFICATE.names"
# The TLS folder is root's; a symlink there that root did not make is removed, never followed.
for path in "$(dirname "$certificate")" "$(dirname "$private_key")" "$certificate" "$private_key" "$names_file"; do
  if [ -L "$path" ] && [ "$(stat -c %u "$path")" != 0 ]; then rm -f "$path"; fi
done
install -d -m 0755 -o root -g root "$(dirname "$certificate")" "$(dirname "$private_key")"

if [ ! -s "$certificate" ] || [ ! -s "$private_key" ] || [ "$(cat "$names_file" 2>/dev/null)" != "$CERT_SANS" ]; then
  request=$(mktemp)
  key_tmp=$(umask 077 && mktemp "$private_key.XXXXXX")
  cert_tmp=$(mktemp "$certificate.XXXXXX")
  names_tmp=$(mktemp "$names_file.XXXXXX")
  trap 'rm -f "$request" "$key_tmp" "$cert_tmp" "$names_tmp"' EXIT
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
    -keyout "$key_tmp" -out "$cert_tmp" -config "$request" 2>/dev/null) \
    || fail "openssl could not make the certificate"
  chmod 0600 "$key_tmp"
  chmod 0644 "$cert_tmp"
  printf '%s' "$CERT_SANS" >"$names_tmp"
  chmod 0644 "$names_tmp"
  mv -f "$key_tmp" "$private_key"
  mv -f "$cert_tmp" "$certificate"
  mv -f "$names_tmp" "$names_file"
  echo "proxy: made a self-signed certificate for $CERT_SANS"
fi

site="/etc/nginx/conf.d/$SITE_NAME.conf"
previous=""
if [ ! -f "$site" ] || [ "$(cat "$site")" != "$(printf '%s' "$PROXY_SITE")" ]; then
  # Keep the site file in use, to put it back if nginx refuses the new one.
  if [ -f "$site" ]; then
    previous=$(mktemp /etc/nginx/.lacchain-site.XXXXXX)
    cp -p "$site" "$previous"
  fi
  staged=$(mktemp /etc/nginx/conf.d/.lacchain-site.XXXXXX)
  printf '%s\n' "$PROXY_SITE" >"$staged"
  chmod 0644 "$staged"
  mv -f "$staged" "$site"
  echo "proxy: wrote $site"
fi
if [ "$DISABLE_DEFAULT_SITE" = true ] && [ -e /etc/nginx/sites-enabled/default ]; then
  # The distribution's default site listens on 80, which a writer's proxy needs.
  rm -f /etc/nginx/sites-enabled/default
  echo "proxy: disabled the default nginx site (port 80 serves the writer's proxy)"
fi

if ! check=$(nginx -t 2>&1); then
  printf '%s\n' "$check" | sed 's/^/proxy: /' >&2
  if [ -n "$previous" ]; then
    mv -f "$previous" "$site"
    fail "nginx refuses the new configuration: the previous $site is back in place"
  fi
  rm -f "$site"
  fail "nginx refuses the configuration: $site removed"
fi
printf '%s\n' "$check" | sed 's/^/proxy: /'
[ -z "$previous" ] || rm -f "$previous"
systemctl enable nginx >/dev/null 2>&1
if systemctl is-active --quiet nginx; then systemctl reload nginx; else systemctl start nginx; fi
if [ -n "${STALE_TOKEN_CHECK_FILE:-}" ] && [ -e "$STALE_TOKEN_CHECK_FILE" ]; then
  rm -f "$STALE_TOKEN_CHECK_FILE"
  echo "proxy: removed the former metrics endpoint's token check $STALE_TOKEN_CHECK_FILE"
fi
# The certificate in use, at every run, for the program's outputs: what clients pin instead of not verifying.
fingerprint=$(openssl x509 -in "$certificate" -noout -fingerprint -sha256) || fail "cannot read the certificate's fingerprint"
pin=$(openssl x509 -in "$certificate" -noout -pubkey | openssl pkey -pubin -outform der | openssl dgst -sha256 -binary | base64) \
  || fail "cannot read the certificate's public key"
echo "$CERT_FINGERPRINT_LABEL ${fingerprint#*=}"
echo "$PUBLIC_KEY_PIN_LABEL sha256//$pin"
echo "proxy: ok"
