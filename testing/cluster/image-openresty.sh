#!/usr/bin/env bash
# Makes the root file system of the writer's proxy stand-in (testing/cluster/images.ts) into OUT_DIR (made new), on
# top of the shared layer (image-runtime.sh): this machine's Debian nginx, its Lua module with the Nginx Development
# Kit, cjson and the Lua libraries the module loads (the packages the SSH path installs for the gas model), laid out
# where the pod runs them from the official openresty/openresty image: the server at /usr/local/openresty/bin/openresty
# and tests/fixtures/openresty-standin/nginx.conf as its main configuration (where Debian's nginx reads it).
# Usage: image-openresty.sh OUT_DIR
set -euo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$out"
mkdir -p "$out"/{usr/local/openresty/bin,etc/nginx/conf.d,var/run/openresty}

# Copies the files $@ of this machine into the root file system, each at its own path (symbolic links followed).
copy_in() {
  for file in "$@"; do
    mkdir -p "$out$(dirname "$file")"
    cp -L "$file" "$out$file"
  done
}

modules=(/usr/lib/nginx/modules/ndk_http_module.so /usr/lib/nginx/modules/ngx_http_lua_module.so)
cjson=/usr/lib/x86_64-linux-gnu/lua/5.1/cjson.so
cp /usr/sbin/nginx "$out/usr/local/openresty/bin/openresty"
copy_in "${modules[@]}" "$cjson"
# The Lua libraries the module requires at its start (resty.core and what it loads), and cjson's own.
tar -C / -cf - usr/share/lua/5.1 | tar -C "$out" -xf -
cp "$here/../../tests/fixtures/openresty-standin/nginx.conf" "$out/etc/nginx/nginx.conf"

# Every shared library nginx, its modules and cjson load.
mapfile -t libraries < <(ldd /usr/sbin/nginx "${modules[@]}" "$cjson" 2>/dev/null |
  awk '/=> \//{print $3} /^\t\/lib/{print $1}' | sort -u)
copy_in "${libraries[@]}"
