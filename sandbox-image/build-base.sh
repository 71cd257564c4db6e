#!/usr/bin/env bash
# Builds the sandbox base image from Debian packages: quarry-sandbox-base:bookworm-<digest>.
#
# No image registry is reachable here, so the base comes from debootstrap + `docker import`
# instead of `FROM debian`. Idempotent: returns at once when the image already exists. The tag's
# digest is of the suite and the package list, so a change of either names a new image and a
# machine that has the old one builds the new one instead of reusing it.
# Needs root (debootstrap) and a Docker engine.
#
#   sandbox-image/build-base.sh               build if missing
#   sandbox-image/build-base.sh --rebuild     build even if present
#   sandbox-image/build-base.sh --print-image print the image's name and exit (what callers build FROM)
set -euo pipefail

MIRROR="${QUARRY_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE=bookworm
# python3-grpcio/protobuf so the runner speaks gRPC; grpc-tools because sandbox-image/Dockerfile
# generates the Python stubs at build time, when the build has no network to install it, and
# pkg-resources because Debian's grpc-tools imports it without depending on it; python3-seccomp for
# the runner's seccomp filter (quarry_runner/wall.py), without which the runner refuses to start.
PACKAGES=python3,python3-grpcio,python3-protobuf,python3-grpc-tools,python3-pkg-resources,python3-seccomp
DIGEST=$(printf '%s %s\n' "$SUITE" "$PACKAGES" | sha256sum | cut -c1-12)
IMAGE="${QUARRY_SANDBOX_BASE_IMAGE:-quarry-sandbox-base:$SUITE-$DIGEST}"

if [[ "${1:-}" == "--print-image" ]]; then
  echo "$IMAGE"
  exit 0
fi

start=${EPOCHREALTIME/./}
elapsed() { local us=$(( ${EPOCHREALTIME/./} - start )); printf '%d.%03ds' $((us / 1000000)) $((us / 1000 % 1000)); }

if [[ "${1:-}" != "--rebuild" ]] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "sandbox-base: $IMAGE present ($(elapsed))"
  exit 0
fi

command -v debootstrap >/dev/null || { echo "sandbox-base: debootstrap is missing (apt-get install debootstrap)" >&2; exit 1; }

# Concurrent callers (tests, setup) must not debootstrap twice into the same engine.
exec 9>"/tmp/quarry-sandbox-base.lock"
flock 9
if [[ "${1:-}" != "--rebuild" ]] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "sandbox-base: $IMAGE built by a concurrent run ($(elapsed))"
  exit 0
fi

rootfs=$(mktemp -d /tmp/quarry-sandbox-base.XXXXXX)
cleanup() {
  # debootstrap may leave /proc or /sys mounted inside the target when interrupted.
  for m in proc sys dev/pts dev; do
    mountpoint -q "$rootfs/$m" 2>/dev/null && umount -l "$rootfs/$m" || true
  done
  rm -rf --one-file-system "$rootfs"
}
trap cleanup EXIT

echo "sandbox-base: debootstrap $SUITE ($PACKAGES) from $MIRROR into $rootfs"
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$rootfs" "$MIRROR" >"$rootfs.log" 2>&1 \
  || { tail -30 "$rootfs.log" >&2; rm -f "$rootfs.log"; exit 1; }
rm -f "$rootfs.log"
echo "sandbox-base: debootstrap done ($(elapsed))"

# The sandbox never runs apt; caches, docs and locales only make the image bigger.
rm -rf "$rootfs"/var/cache/apt/* "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/* \
  "$rootfs"/usr/share/doc/* "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* \
  "$rootfs"/usr/share/locale/* "$rootfs"/usr/share/lintian "$rootfs"/tmp/* "$rootfs"/var/tmp/*
# The byte-code caches stay: the root filesystem is read-only at run time, so Python could never
# write them and would recompile every module on each sandbox start.

tar --numeric-owner -C "$rootfs" -c . \
  | docker import --change 'CMD ["/usr/bin/python3"]' --change "LABEL dev.quarry.base-packages=$SUITE:$PACKAGES" \
      - "$IMAGE" >/dev/null
size=$(docker image inspect --format '{{.Size}}' "$IMAGE")
echo "sandbox-base: imported $IMAGE, $((size / 1024 / 1024)) MiB ($(elapsed))"
