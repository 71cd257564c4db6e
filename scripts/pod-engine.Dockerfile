# The pod check's stand-in for the docker:27-dind sidecar of k8s/base/deployment.yaml, which no
# registry here can serve: Debian's own Docker engine (docker.io, 20.10) on the Debian base that
# sandbox-image/build-base.sh makes, started the way the sidecar starts dockerd: its arguments are
# the container's args of the render. Built by scripts/pod-check.py (docker build --network host,
# for apt).
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends docker.io ca-certificates \
 && rm -rf /var/lib/apt/lists/* /usr/share/doc/* /usr/share/man/*
ENTRYPOINT ["dockerd"]
