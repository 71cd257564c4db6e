#!/usr/bin/env bash
# Prepare a Debian 12 machine (as root) for building and testing Quarry:
# JDK >= 21, Maven, PostgreSQL 15 + pgvector >= 0.8.0, a Docker engine, and promtool.
#
# Safe to run any number of times: every step checks first and only acts when
# something is missing, so a second run prints one "ok" line per step and takes
# a couple of seconds. Only Debian's mirrors and Maven Central are assumed
# reachable, which is why pgvector is built from Debian trixie's source package
# and Docker is Debian's docker.io rather than upstream's.
#
# Usage:
#   scripts/setup.sh                      # do everything
#   scripts/setup.sh --print-java-home    # only print the JDK path, e.g.
#                                         #   export JAVA_HOME="$(scripts/setup.sh --print-java-home)"
# Environment:
#   QUARRY_SETUP_SKIP_DOCKER=1            # skip the Docker engine step (and debootstrap)
set -euo pipefail

PG_VERSION=15
PG_CLUSTER=main
PG_PORT=5432
PG_CONFIG=/usr/lib/postgresql/${PG_VERSION}/bin/pg_config
PGVECTOR_MIN=0.8.0
PREFERRED_JDK=/usr/lib/jvm/temurin-25-jdk-amd64
MIN_JAVA=21
TRIXIE_SRC_FILE=/etc/apt/sources.list.d/quarry-trixie-src.sources
DOCKERD_LOG=/var/log/quarry-dockerd.log
# Long command output (apt, make) goes here so that a normal run stays terse;
# on failure its tail is shown.
SETUP_LOG=/var/log/quarry-setup.log

export DEBIAN_FRONTEND=noninteractive

say() { echo "setup: $*"; }
die() { echo "setup: ERROR: $*" >&2; exit 1; }

# Run a noisy command with its output in $SETUP_LOG; show the tail if it fails.
run_logged() {
    echo "+ $*" >>"$SETUP_LOG"
    if ! "$@" >>"$SETUP_LOG" 2>&1; then
        echo "setup: ERROR: command failed: $*" >&2
        echo "setup: last lines of $SETUP_LOG:" >&2
        tail -n 40 "$SETUP_LOG" >&2
        exit 1
    fi
}

# ---------------------------------------------------------------- apt helpers

# 'apt-get update' is slow, so it runs at most once per run, and only when
# something actually has to be installed. Adding a source invalidates it.
APT_UPDATED=0
apt_update() {
    if [[ $APT_UPDATED == 0 ]]; then
        say "apt-get update"
        run_logged apt-get update
        APT_UPDATED=1
    fi
}

pkg_installed() {
    [[ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null)" == installed ]]
}

# Install whichever of the given packages are not installed yet.
apt_ensure() {
    local missing=() p
    for p in "$@"; do
        pkg_installed "$p" || missing+=("$p")
    done
    [[ ${#missing[@]} == 0 ]] && return 0
    apt_update
    say "installing ${missing[*]}"
    run_logged apt-get install -y --no-install-recommends "${missing[@]}"
}

# ---------------------------------------------------------------- 1. JDK

# Major version of a java binary, e.g. 25 for "25.0.3", 8 for "1.8.0_402".
java_major() {
    local v
    v="$("$1" -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p' | head -n 1)" || true
    [[ -n $v ]] || { echo 0; return; }
    [[ $v == 1.* ]] && v=${v#1.}
    v=${v%%[.+-]*}
    [[ $v =~ ^[0-9]+$ ]] && echo "$v" || echo 0
}

# A JDK (not a bare JRE): Maven needs javac.
is_jdk_at_least() {
    local home=$1
    [[ -x $home/bin/java && -x $home/bin/javac ]] || return 1
    (( $(java_major "$home/bin/java") >= MIN_JAVA ))
}

find_java_home() {
    if is_jdk_at_least "$PREFERRED_JDK"; then
        echo "$PREFERRED_JDK"
        return 0
    fi
    # Otherwise take the newest suitable JDK, so the choice does not depend on
    # directory order.
    local best="" best_major=0 home major
    for home in /usr/lib/jvm/*; do
        [[ -d $home ]] || continue
        is_jdk_at_least "$home" || continue
        major=$(java_major "$home/bin/java")
        if (( major > best_major )); then
            best=$home
            best_major=$major
        fi
    done
    [[ -n $best ]] || return 1
    echo "$best"
}

NO_JDK_MSG="no JDK >= ${MIN_JAVA} found under /usr/lib/jvm. Install one, e.g. Eclipse Temurin 25 \
into ${PREFERRED_JDK} (Debian 12 itself only ships openjdk-17, which is too old)."

step_jdk() {
    local home
    home=$(find_java_home) || die "$NO_JDK_MSG"
    say "jdk ok ($home)"
}

# ---------------------------------------------------------------- 2. Maven

step_maven() {
    if command -v mvn >/dev/null; then
        say "maven ok"
    else
        apt_ensure maven
        say "maven installed"
    fi
}

# The sandbox runner and its tests use Debian's Python with Debian's gRPC and protobuf
# (no PyPI here); the tests generate their stubs with grpc_tools, put the runner under its seccomp
# filter (python3-seccomp) and generate hostile programs with Hypothesis (python3-hypothesis).
step_python() {
    apt_ensure python3 python3-grpcio python3-protobuf python3-grpc-tools python3-seccomp python3-hypothesis
    say "python (grpcio, protobuf, grpc-tools, seccomp, hypothesis) ok"
}

# ---------------------------------------------------------------- 3. PostgreSQL

cluster_status() {
    # pg_lsclusters prints e.g. "15 main 5432 online postgres ..."; empty if absent.
    pg_lsclusters -h 2>/dev/null | awk -v v="$PG_VERSION" -v c="$PG_CLUSTER" '$1==v && $2==c {print $3, $4}'
}

step_postgresql() {
    # server-dev is needed to build pgvector; contrib for the usual extensions.
    apt_ensure "postgresql-${PG_VERSION}" "postgresql-server-dev-${PG_VERSION}" postgresql-contrib

    local status port state
    status=$(cluster_status)
    if [[ -z $status ]]; then
        # Installing postgresql-15 normally creates 15/main, but not if the
        # package was installed with cluster creation disabled or it was dropped.
        say "creating cluster ${PG_VERSION}/${PG_CLUSTER}"
        run_logged pg_createcluster -p "$PG_PORT" "$PG_VERSION" "$PG_CLUSTER"
        status=$(cluster_status)
    fi
    read -r port state <<<"$status"
    [[ $port == "$PG_PORT" ]] || die "cluster ${PG_VERSION}/${PG_CLUSTER} uses port $port, Quarry expects ${PG_PORT} \
(another PostgreSQL cluster probably took ${PG_PORT}; see pg_lsclusters)"

    if [[ $state == online* ]]; then
        say "postgresql ok"
    else
        # No systemd in CI, so start the cluster directly; pg_ctlcluster
        # delegates to systemctl by itself where systemd is running.
        run_logged pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" start
        say "postgresql started"
    fi
}

# ---------------------------------------------------------------- 4. pgvector

VECTOR_CONTROL=/usr/share/postgresql/${PG_VERSION}/extension/vector.control
VECTOR_SO=/usr/lib/postgresql/${PG_VERSION}/lib/vector.so

control_version() {
    sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" "$1"
}

version_at_least() {
    dpkg --compare-versions "$1" ge "$2"
}

add_trixie_source() {
    # Bookworm only has pgvector 0.4.x; trixie's source package is recent enough
    # and builds fine against PostgreSQL 15. deb-src only: binary packages from
    # trixie must never be mixed into this bookworm system.
    local want
    want="Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg"
    if [[ "$(cat "$TRIXIE_SRC_FILE" 2>/dev/null)" != "$want" ]]; then
        printf '%s\n' "$want" >"$TRIXIE_SRC_FILE"
        APT_UPDATED=0
    fi
}

# Fail loudly if apt would ever consider trixie binary packages, i.e. if any
# trixie *Packages* index is known. (Sources indices do not show up here.)
assert_no_trixie_binaries() {
    if apt-cache policy 2>/dev/null | grep -q 'n=trixie'; then
        die "apt knows binary packages from trixie; check /etc/apt/sources.list*"
    fi
}

WORKDIR=""
cleanup() { [[ -n $WORKDIR ]] && rm -rf "$WORKDIR"; return 0; }
trap cleanup EXIT

pgvector_ok() {
    [[ -f $VECTOR_CONTROL && -f $VECTOR_SO ]] \
        && version_at_least "$(control_version "$VECTOR_CONTROL")" "$PGVECTOR_MIN"
}

step_pgvector() {
    if pgvector_ok; then
        say "pgvector ok ($(control_version "$VECTOR_CONTROL"))"
        return 0
    fi
    if [[ -f $VECTOR_CONTROL ]]; then
        say "pgvector $(control_version "$VECTOR_CONTROL") is older than $PGVECTOR_MIN, rebuilding"
    fi

    apt_ensure dpkg-dev build-essential "postgresql-server-dev-${PG_VERSION}"
    add_trixie_source   # normally already done by main, before any apt-get update
    apt_update
    assert_no_trixie_binaries

    WORKDIR=$(mktemp -d /tmp/quarry-pgvector.XXXXXX)
    # apt drops privileges to _apt for downloads; let it write here.
    chmod 755 "$WORKDIR"
    chown _apt "$WORKDIR" 2>/dev/null || true
    say "fetching pgvector source from trixie"
    (cd "$WORKDIR" && run_logged apt-get source pgvector)

    local srcdir built
    srcdir=$(find "$WORKDIR" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)
    [[ -n $srcdir && -f $srcdir/vector.control ]] || die "apt-get source pgvector produced no source tree in $WORKDIR"
    built=$(control_version "$srcdir/vector.control")
    version_at_least "$built" "$PGVECTOR_MIN" \
        || die "trixie's pgvector is $built, need >= $PGVECTOR_MIN"

    say "building pgvector $built"
    # OPTFLAGS="": pgvector defaults to -march=native, which would tie the
    # installed library to this exact CPU; Debian builds it the same way.
    run_logged make -C "$srcdir" -j"$(nproc)" PG_CONFIG="$PG_CONFIG" OPTFLAGS=""
    run_logged make -C "$srcdir" install PG_CONFIG="$PG_CONFIG" OPTFLAGS=""

    [[ -f $VECTOR_CONTROL && -f $VECTOR_SO ]] || die "pgvector install did not produce $VECTOR_CONTROL and $VECTOR_SO"
    say "pgvector installed ($(control_version "$VECTOR_CONTROL"))"
}

# ---------------------------------------------------------------- 5. database

# psql as the postgres superuser over the local socket (peer auth).
# cd / because postgres cannot read root's working directory.
pg_super() {
    (cd / && runuser -u postgres -- psql -X -q -At -v ON_ERROR_STOP=1 -p "$PG_PORT" "$@")
}

quarry_tcp_login_works() {
    PGPASSWORD=quarry PGCONNECT_TIMEOUT=5 psql -X -q -At -h 127.0.0.1 -p "$PG_PORT" -U quarry -d quarry \
        -c 'select 1' >/dev/null 2>&1
}

ensure_role() {
    local attrs
    attrs=$(pg_super -d postgres -c "select rolcanlogin::text || rolcreatedb::text || rolsuper::text from pg_roles where rolname = 'quarry'")
    if [[ $attrs == truetruefalse ]]; then
        return 0
    fi
    # Password is (re)set here too; whether it works is checked over TCP below.
    pg_super -d postgres <<'SQL'
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'quarry') THEN
        CREATE ROLE quarry;
    END IF;
END
$$;
ALTER ROLE quarry WITH LOGIN CREATEDB NOSUPERUSER PASSWORD 'quarry';
SQL
    say "role quarry created/updated"
}

# The gateway's own role: it neither owns the tables nor bypasses row-level security, so
# PostgreSQL itself keeps tenants apart (the migrations, run as quarry, grant it what it needs).
ensure_app_role() {
    local attrs
    attrs=$(pg_super -d postgres -c "select rolcanlogin::text || rolsuper::text || rolbypassrls::text from pg_roles where rolname = 'quarry_app'")
    if [[ $attrs == truefalsefalse ]]; then
        return 0
    fi
    pg_super -d postgres <<'SQL'
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'quarry_app') THEN
        CREATE ROLE quarry_app;
    END IF;
END
$$;
ALTER ROLE quarry_app WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS PASSWORD 'quarry_app';
SQL
    say "role quarry_app created/updated"
}

# Tests drop their databases WITH (FORCE), as quarry, while a gateway's quarry_app connections may
# still be closing: terminating another role's session needs pg_signal_backend.
ensure_signal_backend() {
    local member
    member=$(pg_super -d postgres -c "select pg_has_role('quarry', 'pg_signal_backend', 'member')::text")
    if [[ $member != true ]]; then
        pg_super -d postgres -c "GRANT pg_signal_backend TO quarry"
        say "role quarry may end other roles' sessions (pg_signal_backend)"
    fi
}

ensure_database() {
    local owner
    owner=$(pg_super -d postgres -c "select pg_get_userbyid(datdba) from pg_database where datname = 'quarry'")
    if [[ -z $owner ]]; then
        pg_super -d postgres -c "CREATE DATABASE quarry OWNER quarry"
        say "database quarry created"
    elif [[ $owner != quarry ]]; then
        pg_super -d postgres -c "ALTER DATABASE quarry OWNER TO quarry"
        say "database quarry owner set to quarry"
    fi
}

ensure_vector_extension() {
    # template1 too: databases that tests create as quarry (not a superuser,
    # so it could not create the extension itself) inherit it from there.
    # UPDATE brings the SQL objects in line after a newer pgvector was built.
    local db
    for db in template1 quarry; do
        pg_super -d "$db" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS vector;
ALTER EXTENSION vector UPDATE;
SQL
    done
}

ensure_tcp_password_auth() {
    quarry_tcp_login_works && return 0
    # Debian's default pg_hba.conf allows scram-sha-256 from 127.0.0.1; if it
    # was changed, put an explicit rule for quarry first and reload.
    local hba
    hba=$(pg_super -d postgres -c 'show hba_file')
    if ! grep -qE '^host[[:space:]]+all[[:space:]]+quarry[[:space:]]+127\.0\.0\.1/32[[:space:]]+scram-sha-256' "$hba"; then
        sed -i '1i host all quarry 127.0.0.1/32 scram-sha-256  # added by quarry scripts/setup.sh' "$hba"
    fi
    pg_super -d postgres -c 'select pg_reload_conf()' >/dev/null
    quarry_tcp_login_works || die "password login as quarry on 127.0.0.1:${PG_PORT} fails; check $hba and listen_addresses"
    say "pg_hba: added password rule for quarry on 127.0.0.1"
}

# Both settings only take effect at server start, so the check compares the
# running values (which also catches an earlier ALTER SYSTEM that was never
# followed by a restart) and pending_restart (which catches a config file that
# was changed since the last start and would undo them at the next restart).
server_settings_state() {
    pg_super -d postgres -c "select current_setting('max_connections') || ' ' || current_setting('shared_buffers')
        || (select case when bool_or(pending_restart) then ' pending' else '' end
            from pg_settings where name in ('max_connections', 'shared_buffers'))"
}

ensure_server_settings() {
    local state
    state=$(server_settings_state)
    [[ $state == "200 512MB" ]] && return 0
    pg_super -d postgres >/dev/null <<'SQL'
ALTER SYSTEM SET max_connections = 200;
ALTER SYSTEM SET shared_buffers = '512MB';
SELECT pg_reload_conf();
SQL
    # A reload is enough when only the file was off; the values need a restart.
    sleep 0.2
    state=$(server_settings_state)
    if [[ $state != "200 512MB" ]]; then
        say "restarting postgresql (max_connections/shared_buffers were: $state)"
        run_logged pg_ctlcluster "$PG_VERSION" "$PG_CLUSTER" restart
        state=$(server_settings_state)
        [[ $state == "200 512MB" ]] || die "after restart max_connections/shared_buffers = $state, expected 200 512MB"
    else
        say "postgresql settings rewritten (no restart needed)"
    fi
}

step_database() {
    ensure_server_settings
    ensure_role
    ensure_app_role
    ensure_signal_backend
    ensure_database
    ensure_vector_extension
    ensure_tcp_password_auth
    say "database ok"
}

# ---------------------------------------------------------------- 6. Docker

# timeout: a daemon that accepts the connection but is wedged must not hang us.
docker_up() { timeout 10 docker info >/dev/null 2>&1; }

start_dockerd() {
    # No systemd in CI: run the daemon ourselves. No iptables and no bridge so
    # that it does not depend on netfilter/NAT support in sandboxed kernels;
    # containers then get only the host or none networks (none by default).
    # setsid+nohup so it outlives this script and its session; every fd is
    # redirected so that a caller capturing our output does not wait on it.
    say "starting dockerd (log: $DOCKERD_LOG)"
    setsid nohup dockerd --iptables=false --bridge=none >>"$DOCKERD_LOG" 2>&1 </dev/null &
    disown || true
    local i
    for ((i = 0; i < 120; i++)); do
        docker_up && return 0
        sleep 0.5
    done
    echo "setup: last lines of $DOCKERD_LOG:" >&2
    tail -n 30 "$DOCKERD_LOG" >&2
    die "dockerd did not come up within 60 s"
}

step_docker() {
    if [[ ${QUARRY_SETUP_SKIP_DOCKER:-0} == 1 ]]; then
        say "docker skipped (QUARRY_SETUP_SKIP_DOCKER=1)"
        return 0
    fi
    # debootstrap: a later step builds images from a Debian root filesystem,
    # since no container registry is reachable.
    local pkgs=(debootstrap)
    # /usr/local/bin/docker may be a lone client; what matters is the daemon.
    # (apt_ensure skips recommends: for docker.io they are needrestart,
    # apparmor, git and the like, none of which the daemon needs.)
    command -v dockerd >/dev/null || pkgs+=(docker.io)
    apt_ensure "${pkgs[@]}"

    if docker_up; then
        say "docker ok"
    else
        start_dockerd
        say "docker started"
    fi
}

# The sandbox image the gateway launches (QUARRY_SANDBOX_IMAGE, default quarry-sandbox:latest):
# the debootstrapped base first, then sandbox-image/Dockerfile on it. docker build's layer cache
# makes this a few seconds when the runner has not changed, and a rebuild when it has.
step_sandbox_image() {
    if [[ ${QUARRY_SETUP_SKIP_DOCKER:-0} == 1 ]]; then
        return 0
    fi
    local root image base log
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    image="${QUARRY_SANDBOX_IMAGE:-quarry-sandbox:latest}"
    base="$(bash "$root/sandbox-image/build-base.sh" --print-image)"
    bash "$root/sandbox-image/build-base.sh" >/dev/null || die "building the sandbox base image failed (sandbox-image/build-base.sh)"
    log="$(mktemp)"
    if ! (cd "$root" && docker build -q -f sandbox-image/Dockerfile \
            --build-arg BASE_IMAGE="$base" \
            -t "$image" .) >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        die "building the sandbox image $image failed"
    fi
    rm -f "$log"
    say "sandbox image ok ($image)"
}

# A real image registry for the tests that pull the sandbox image (SandboxImagePullTest) and for the
# pod check (scripts/pod-check.py): Debian's docker-registry (the distribution registry, 2.8), run by
# them on a loopback port and never as a service here, and htpasswd (apache2-utils) for its bcrypt
# password file. The pod check reads kubectl kustomize's render with python3-yaml.
step_registry() {
    if [[ ${QUARRY_SETUP_SKIP_DOCKER:-0} == 1 ]]; then
        return 0
    fi
    apt_ensure docker-registry apache2-utils python3-yaml
    say "docker-registry, htpasswd and python3-yaml ok"
}

# ---------------------------------------------------------------- 7. promtool

# promtool checks and tests monitoring/'s Prometheus rules (MonitoringTest). Debian ships it only
# inside the prometheus package; the server it also installs is not needed and not started here.
step_promtool() {
    if command -v promtool >/dev/null; then
        say "promtool ok"
        return 0
    fi
    apt_ensure prometheus
    say "promtool installed"
}

# ---------------------------------------------------------------- 8. a browser for the console's test

# ConsoleBrowserTest drives the web console in Debian's headless chromium through its chromedriver
# (Selenium is told both paths, so it never looks for or downloads a browser of its own), with a
# font for its text: recommends are not installed here, and the screenshots need glyphs.
step_browser() {
    apt_ensure chromium chromium-driver fonts-dejavu-core
    say "chromium and chromedriver ok"
}

# ---------------------------------------------------------------- 8b. a load balancer for the cluster test

# ClusterTest and `./quarry bench cluster` run three gateways behind Debian's HAProxy on loopback,
# started with a configuration of their own (support/GatewayCluster). The package's own service is
# not needed: where systemd runs it, it is stopped and disabled.
step_haproxy() {
    if command -v haproxy >/dev/null; then
        say "haproxy ok"
        return 0
    fi
    apt_ensure haproxy
    if command -v systemctl >/dev/null && systemctl is-system-running >/dev/null 2>&1; then
        systemctl disable --now haproxy >/dev/null 2>&1 || true
    fi
    say "haproxy installed"
}

# ---------------------------------------------------------------- 9. the gateway's own filesystems

# A sandbox's /proc/self/mountinfo shows a bind mount's source from the root of the filesystem it
# lives on, so the documents and run directories must each be the root of a filesystem of their own
# for it to show nothing of the host (README, Security). These are the defaults `./quarry serve`
# uses from the checkout (QUARRY_DATA_DIR=var/data, QUARRY_SANDBOX_RUN_DIR=var/run/sandboxes); a
# tmpfs each (the documents tree is a cache the gateway rebuilds from PostgreSQL, the run directory
# holds sockets). QUARRY_SETUP_DATA_SIZE sizes the first (default 2g: memory only as it is used);
# for a large corpus, mount a disk's filesystem (or a loop-mounted image) there instead: setup
# leaves any existing mount alone.
step_data_mounts() {
    local repo dir size
    repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
    for dir in "$repo/var/data" "$repo/var/run/sandboxes"; do
        mkdir -p "$dir"
        if mountpoint -q "$dir"; then
            say "$dir is a filesystem of its own: ok"
            continue
        fi
        size=64m
        [[ $dir == */var/data ]] && size="${QUARRY_SETUP_DATA_SIZE:-2g}"
        mount -t tmpfs -o "size=$size,mode=0755" tmpfs "$dir" || die "cannot mount a tmpfs on $dir"
        say "$dir: a tmpfs of its own ($size)"
    done
}

# ---------------------------------------------------------------- main

main() {
    case "${1:-}" in
        --print-java-home)
            find_java_home || die "$NO_JDK_MSG"
            return 0
            ;;
        "") ;;
        *) die "unknown argument '$1' (usage: $0 [--print-java-home])" ;;
    esac
    [[ $EUID == 0 ]] || die "must run as root"

    # If pgvector will have to be built, add its source entry now so that the
    # single apt-get update of this run already covers it.
    pgvector_ok || add_trixie_source

    step_jdk
    step_maven
    step_python
    step_postgresql
    step_pgvector
    step_database
    step_docker
    step_sandbox_image
    step_registry
    step_promtool
    step_browser
    step_haproxy
    step_data_mounts
}

main "$@"
