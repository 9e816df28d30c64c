#!/usr/bin/env bash
# Makes the root file system the kubelet tests' images share (testing/cluster/images.ts), from this machine's own
# Debian files, into OUT_DIR (made new): busybox (its shell and tools, as /bin/sh and the usual commands), Python 3
# with the standard library the stand-ins use (tests/fixtures/besu-standin, the rotation client's stand-in), and a
# Java runtime made by jlink from the JDK tests/setup.sh installs (java.base and the modules the pods' metrics relay,
# scripts/metrics-relay.java, needs under Java's source launcher). The official images have their own distribution
# underneath; what the pods run needs only these.
# Usage: image-runtime.sh OUT_DIR
set -euo pipefail
out=$1
rm -rf "$out"
mkdir -p "$out"/{bin,usr/bin,usr/lib,etc,tmp,opt}
chmod 1777 "$out/tmp"

# Copies the files $@ of this machine into the root file system, each at its own path (symbolic links followed).
copy_in() {
  for file in "$@"; do
    mkdir -p "$out$(dirname "$file")"
    cp -L "$file" "$out$file"
  done
}

# The shared libraries the executables or libraries $@ load, and the loader.
libraries_of() {
  ldd "$@" 2>/dev/null | awk '/=> \//{print $3} /^\t\/lib/{print $1}' | sort -u
}

# busybox as the shell and the commands the pods' scripts call.
busybox=$(command -v busybox)
cp "$busybox" "$out/bin/busybox"
for applet in $("$busybox" --list); do
  [ -e "$out/bin/$applet" ] || ln -s busybox "$out/bin/$applet"
done
ln -s /bin/busybox "$out/usr/bin/env"

# Debian's Python (not one a version manager puts first on PATH), with its standard library (without its tests, IDLE, Tk and the packaging tools).
python=$(readlink -f /usr/bin/python3)
version=$(basename "$python")
copy_in "$python"
ln -s "$version" "$out/usr/bin/python3"
tar -C / -cf - --exclude="usr/lib/$version/test" --exclude="usr/lib/$version/idlelib" \
  --exclude="usr/lib/$version/tkinter" --exclude="usr/lib/$version/turtledemo" \
  --exclude="usr/lib/$version/ensurepip" --exclude="usr/lib/$version/lib2to3" \
  --exclude="usr/lib/$version/config-*" --exclude='__pycache__' --exclude="usr/lib/$version/dist-packages" \
  "usr/lib/$version" | tar -C "$out" -xf -

# A Java runtime for the source launcher, from Debian's JDK: the compiler, the HTTP client and server.
jdk=$(dirname "$(dirname "$(readlink -f /usr/bin/javac)")")
"$jdk/bin/jlink" --add-modules java.base,java.net.http,jdk.httpserver,jdk.compiler,jdk.zipfs \
  --strip-debug --no-man-pages --no-header-files --output "$out/opt/java"
ln -s /opt/java/bin/java "$out/usr/bin/java"

# Every shared library the executables and Python's and Java's own libraries load.
mapfile -t loaded < <(find "$out" -type f \( -name '*.so*' -o -perm -u+x \) -exec file {} + |
  awk -F: '/ELF/ && /dynamic/{print $1}')
mapfile -t libraries < <(libraries_of "${loaded[@]}" | grep -v "^$out")
copy_in "${libraries[@]}"

# Besu's image user (1000) and the nobody the pause program runs as.
printf 'root:x:0:0:root:/root:/bin/sh\nbesu:x:1000:1000:besu:/opt/besu:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$out/etc/passwd"
printf 'root:x:0:\nbesu:x:1000:\nnogroup:x:65534:\n' >"$out/etc/group"
