#!/usr/bin/env bash
# Builds the sandbox base image from Debian packages: debootstrap a minimal bookworm with python3,
# grpcio, protobuf and grpc-tools, then `docker import` it. This machine has no image registry, so
# `FROM debian:bookworm-slim` cannot be pulled; the Dockerfile takes this image as BASE_IMAGE.
# Idempotent: does nothing when the image exists (FORCE=1 rebuilds). Needs root and Docker.
# DEBIAN_MIRROR overrides debootstrap's default mirror.
set -euo pipefail

IMAGE="${IMAGE:-quarry-sandbox-base:bookworm}"
PACKAGES="python3,python3-grpcio,python3-protobuf,python3-grpc-tools"

if [[ "${FORCE:-0}" != 1 ]] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "$IMAGE already exists (FORCE=1 to rebuild)"
  exit 0
fi

if ! command -v debootstrap >/dev/null; then
  apt-get install -y -q debootstrap
fi

rootfs="$(mktemp -d /tmp/quarry-sandbox-rootfs.XXXXXX)"
trap 'rm -rf "$rootfs"' EXIT

debootstrap --variant=minbase --include="$PACKAGES" bookworm "$rootfs" ${DEBIAN_MIRROR:+"$DEBIAN_MIRROR"}

# Nothing at run time needs package lists, caches, docs or locales: smaller image, faster import.
chroot "$rootfs" apt-get clean
rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/* "$rootfs"/usr/share/doc/* \
       "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/*

tar --numeric-owner -C "$rootfs" -c . \
  | docker import --change 'CMD ["/bin/bash"]' --message "quarry sandbox base: $PACKAGES" - "$IMAGE"
echo "built $IMAGE"
