#!/usr/bin/python3
"""The pod check: the gateway pod of k8s/, rendered by the real kustomize and run on this machine.

    scripts/pod-check.py [--k8s DIR] [--component NAME]... [--keep]

Renders DIR (default: this checkout's k8s/) with `kubectl kustomize`, base plus the components
named (default: autoscaling and ingress), reads the Deployment quarry-gateway and what it refers to,
and runs that pod on the local Docker engine with real parts:

  - the engine container as the render has it (args, volumes), from an image built of Debian's
    docker.io: docker:27-dind cannot be pulled here. Its privileged mode is granted where the
    host's engine can; where it cannot (no CAP_SYS_RESOURCE in the host engine's bounding set, as
    on the machines this was written on), as every capability but that one, no seccomp or AppArmor
    profile, every device, and the cgroup filesystem writable: what dockerd needs of it;
  - the gateway container from the gateway image (scripts/gateway-image.sh builds it) with the
    render's user, groups, read-only root, dropped capabilities, no-new-privileges, memory limit,
    volumes and environment, joined to the engine's network namespace as containers of a pod are;
  - the volumes as the kubelet makes them: a Memory emptyDir a tmpfs of its sizeLimit, a disk
    emptyDir a directory of the host's filesystem, a generic ephemeral volume a tmpfs of its
    requested size (a filesystem of its own, as a block volume is), Secrets as files, all with
    the pod's fsGroup;
  - a real registry (Debian's docker-registry, basic authentication) the sandbox image is pushed to,
    and its credentials in the dockerconfigjson Secret the render mounts;
  - this host's PostgreSQL (a throwaway database) and a scripted OpenAI-compatible model (a stand-in:
    no model is reachable here).

Only addresses change: PostgreSQL's host and database, the API and metrics ports (the pod's network
is the host's here), the model endpoint and the sandbox image's registry. Then it checks that the
pod is not ready without the sandbox image and says why, becomes ready once the registry has it,
ingests, runs an analysis scoped to one document, that no sandbox's /proc/self/mountinfo shows a
path of the host, and that SIGTERM exits 0 leaving no sandbox. It prints what it cannot check.
Exits 1 when a check fails. Needs root (mounts, the engine), kubectl, docker-registry, htpasswd,
psql; ./quarry setup installs them. POD_CHECK_PORT_BASE=N takes ports N.. instead of free ones.
"""
import argparse
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import yaml

from pod_check_parts import (Fatal, Registry, Results, ScriptedModel, cpus, http_json, http_status, multipart, ports,
                             quantity, run, say, wait_for)

ROOT = Path(__file__).resolve().parent.parent
GATEWAY = "gateway"
ENGINE = "docker"
START_TIMEOUT_S = 240
PG = dict(host="127.0.0.1", port="5432", user="quarry", password="quarry", app_user="quarry_app",
          app_password="quarry_app")
CANNOT = [
    "scheduling, node capacity and the kubelet itself: the check calls the probes' endpoints as the"
    " kubelet would, and sizeLimit evictions of disk emptyDirs do not happen",
    "NetworkPolicy enforcement: the policies are read (egress to the model's and the registry's ports),"
    " not enforced; the pod's network is the host's",
    "the real docker:27-dind image (Debian's docker.io 20.10 stands in) and a real privileged"
    " container where the host engine cannot grant one",
    "generic ephemeral volumes (a tmpfs of the requested size stands in for a provisioned block volume)",
    "the Ingress controller, the Prometheus adapter and the HorizontalPodAutoscaler (read, not run)",
    "in-cluster PostgreSQL and the database-roles Job (K8sDatabaseRolesTest runs the Job's script)",
    "a real model: a scripted OpenAI-compatible server stands in",
]


# ---------------------------------------------------------------- the render

def render(k8s, components, work):
    """kubectl kustomize of an overlay holding k8s/base and the components."""
    overlay = work / "overlay"
    overlay.mkdir()
    rel = os.path.relpath(k8s, overlay)
    (overlay / "kustomization.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "resources": [f"{rel}/base"], "components": [f"{rel}/components/{c}" for c in components]}))
    out = run(["kubectl", "kustomize", str(overlay)]).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def find(objects, kind, name=None):
    found = [o for o in objects if o.get("kind") == kind and (name is None or o["metadata"]["name"] == name)]
    return found[0] if name is not None and found else (None if name is not None else found)


def environment(objects, container, secrets_, pod_name):
    """The container's environment as the kubelet builds it, Secrets from the check's own values."""
    env = {}
    for source in container.get("envFrom", []):
        if "configMapRef" in source:
            env.update(find(objects, "ConfigMap", source["configMapRef"]["name"]).get("data", {}))
        else:
            raise Fatal(f"envFrom {source}: only ConfigMaps are emulated")
    for e in container.get("env", []):
        if "value" in e:
            env[e["name"]] = e["value"]
            continue
        ref = e.get("valueFrom", {})
        if "secretKeyRef" in ref:
            key = (ref["secretKeyRef"]["name"], ref["secretKeyRef"]["key"])
            if key in secrets_:
                env[e["name"]] = secrets_[key]
            elif not ref["secretKeyRef"].get("optional"):
                raise Fatal(f"{e['name']}: the check has no value for Secret {key[0]} key {key[1]}")
        elif "configMapKeyRef" in ref:
            env[e["name"]] = find(objects, "ConfigMap", ref["configMapKeyRef"]["name"])["data"][ref["configMapKeyRef"]["key"]]
        elif "fieldRef" in ref:
            env[e["name"]] = {"metadata.name": pod_name, "metadata.namespace": "default"}.get(
                ref["fieldRef"]["fieldPath"], "127.0.0.1")
    return env


def static_checks(objects, results):
    """What the render must hold that a run here cannot show: mount privacy, egress, the metric pipeline, the ingress."""
    deployment = find(objects, "Deployment", "quarry-gateway")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    gateway = next(c for c in deployment["spec"]["template"]["spec"]["containers"] if c["name"] == GATEWAY)
    config = {}
    for source in gateway.get("envFrom", []):
        config.update(find(objects, "ConfigMap", source["configMapRef"]["name"]).get("data", {}))
    results.check(config.get("QUARRY_SANDBOX_MOUNT_PRIVACY") == "require", "mount privacy is required",
                  "QUARRY_SANDBOX_MOUNT_PRIVACY=require",
                  f"QUARRY_SANDBOX_MOUNT_PRIVACY={config.get('QUARRY_SANDBOX_MOUNT_PRIVACY', 'warn (unset)')}: a pod whose"
                  " volumes show the node's paths to sandboxes starts anyway")
    open_ports = set()
    for policy in find(objects, "NetworkPolicy"):
        selects = all(labels.get(k) == v for k, v in policy["spec"].get("podSelector", {}).get("matchLabels", {}).items())
        if selects and "Egress" in policy["spec"].get("policyTypes", []):
            for rule in policy["spec"].get("egress", []):
                open_ports.update(int(p["port"]) for p in rule.get("ports", []))
    model = config.get("QUARRY_MODEL_BASE_URL") or config.get("OPENAI_BASE_URL")
    if not model:
        results.fail("egress to the model", "the ConfigMap names no model endpoint (QUARRY_MODEL_BASE_URL); the"
                     f" network policies admit egress on {sorted(open_ports)}")
    else:
        m = re.match(r"(\w+)://[^/:]+(?::(\d+))?", model)
        port = int(m.group(2) or (443 if m.group(1) == "https" else 80))
        results.check(port in open_ports, "egress to the model", f"{model}: port {port} admitted",
                      f"{model}: port {port} is not among the egress ports {sorted(open_ports)}")
    typical = {443: "hosted APIs", 8000: "vLLM", 11434: "Ollama"}
    missing = {p: n for p, n in typical.items() if p not in open_ports}
    results.check(not missing, "egress on the model servers' usual ports", "443, 8000 (vLLM), 11434 (Ollama)",
                  "cut off: " + ", ".join(f"{p} ({n})" for p, n in missing.items()))
    for hpa in find(objects, "HorizontalPodAutoscaler"):
        for metric in hpa["spec"].get("metrics", []):
            if metric["type"] == "Resource":
                continue
            name = metric[metric["type"].lower()]["metric"]["name"]
            served = any(rule.get("name", {}).get("as") == name
                         for cm in find(objects, "ConfigMap") if "config.yaml" in cm.get("data", {})
                         for rule in (yaml.safe_load(cm["data"]["config.yaml"]) or {}).get("rules", []))
            served |= bool(find(objects, "ScaledObject"))
            results.check(served, f"the autoscaler's metric {name}", "a prometheus-adapter rule in the render serves it",
                          "nothing in the render serves it (no prometheus-adapter rule, no KEDA ScaledObject):"
                          " the HorizontalPodAutoscaler cannot read it")
    routes = find(objects, "Ingress") + find(objects, "HTTPRoute")
    mcp = [r for r in routes if any(p.get("path") == "/mcp" for rule in r["spec"].get("rules", [])
                                    for p in rule.get("http", {}).get("paths", []))]
    affinity = [r for r in mcp if any("upstream-hash-by" in a or "affinity" in a
                                      for a in r["metadata"].get("annotations", {}))]
    results.check(routes and affinity, "ingress with session affinity for /mcp",
                  ", ".join(r["kind"] + "/" + r["metadata"]["name"] for r in routes),
                  "no Ingress or HTTPRoute in the render" if not routes else "no route keeps /mcp on one replica")
    return config


# ---------------------------------------------------------------- the parts

# ---------------------------------------------------------------- the pod

class Pod:
    """The rendered pod's volumes and containers on this host; everything it makes goes in close()."""

    def __init__(self, objects, work, pod_name, secret_values, secret_files):
        self.work = work
        self.name = pod_name
        self.deployment = find(objects, "Deployment", "quarry-gateway")
        self.spec = self.deployment["spec"]["template"]["spec"]
        self.objects = objects
        self.secrets = secret_values
        self.secret_files = secret_files
        self.mounts = []
        self.containers = []
        self.volumes = {}
        self.notes = []

    def container(self, name):
        return next(c for c in self.spec["containers"] if c["name"] == name)

    def make_volumes(self):
        fs_group = self.spec.get("securityContext", {}).get("fsGroup")
        for v in self.spec.get("volumes", []):
            path = self.work / "volumes" / v["name"]
            path.mkdir(parents=True)
            if "emptyDir" in v:
                ed = v["emptyDir"] or {}
                if ed.get("medium") == "Memory":
                    size = quantity(ed["sizeLimit"]) if "sizeLimit" in ed else None
                    self.tmpfs(path, size)
                    kind = f"tmpfs of {ed.get('sizeLimit', 'half the memory')}"
                else:
                    kind = "a directory of the host's filesystem (a disk emptyDir)"
            elif "ephemeral" in v:
                size = v["ephemeral"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"]
                self.tmpfs(path, quantity(size))
                kind = f"tmpfs of {size} standing in for a generic ephemeral volume"
            elif "secret" in v:
                files = self.secret_files.get(v["secret"]["secretName"])
                if files is None and not v["secret"].get("optional"):
                    raise Fatal(f"volume {v['name']}: no value for Secret {v['secret']['secretName']}")
                for item in v["secret"].get("items", []) if files else []:
                    f = path / item["path"]
                    f.write_text(files[item["key"]])
                    os.chmod(f, item.get("mode", v["secret"].get("defaultMode", 0o644)))
                    if fs_group is not None:
                        os.chown(f, 0, fs_group)
                kind = f"Secret {v['secret']['secretName']}" + ("" if files else " (absent, optional)")
            elif "configMap" in v:
                for key, value in find(self.objects, "ConfigMap", v["configMap"]["name"]).get("data", {}).items():
                    (path / key).write_text(value)
                kind = f"ConfigMap {v['configMap']['name']}"
            else:
                raise Fatal(f"volume {v['name']}: {sorted(v)} is not emulated")
            if "secret" not in v and "configMap" not in v:
                # The kubelet's emptyDir: world-writable, then the fsGroup's with the group bit kept.
                os.chmod(path, 0o777)
                if fs_group is not None:
                    os.chown(path, 0, fs_group)
                    os.chmod(path, 0o2777)
            self.volumes[v["name"]] = path
            say(f"volume {v['name']}: {kind}")

    def tmpfs(self, path, size):
        opts = "mode=0777" + (f",size={size}" if size else "")
        run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(path)])
        self.mounts.append(path)

    def docker_args(self, c, can_privilege):
        pod_sc = self.spec.get("securityContext", {})
        sc = {**pod_sc, **c.get("securityContext", {})}
        args = []
        if sc.get("privileged"):
            if can_privilege:
                args += ["--privileged"]
            else:
                args += ["--cap-add", "ALL", "--cap-drop", "SYS_RESOURCE", "--security-opt", "seccomp=unconfined",
                         "--security-opt", "apparmor=unconfined", "--security-opt", "systempaths=unconfined",
                         "--device-cgroup-rule", "a *:* rwm", "-v", "/sys/fs/cgroup:/sys/fs/cgroup"]
                self.notes.append(f"{c['name']}: privileged emulated (this host's engine cannot grant CAP_SYS_RESOURCE)")
        if "runAsUser" in sc:
            group = sc.get("runAsGroup", sc["runAsUser"])
            if sc.get("privileged") and not can_privilege and sc["runAsUser"] == 0 and group != 0:
                # runc sets a sandbox's rlimits on a process of other credentials than its own, which
                # takes CAP_SYS_RESOURCE: a privileged container has it, the stand-in does not.
                self.notes.append(f"{c['name']}: runs as 0:0, not 0:{group}, for want of CAP_SYS_RESOURCE")
                group = 0
            args += ["--user", f"{sc['runAsUser']}:{group}"]
        for g in ([pod_sc["fsGroup"]] if "fsGroup" in pod_sc else []) + pod_sc.get("supplementalGroups", []):
            args += ["--group-add", str(g)]
        if sc.get("readOnlyRootFilesystem"):
            args += ["--read-only"]
        caps = sc.get("capabilities", {})
        for cap in caps.get("drop", []):
            args += ["--cap-drop", cap]
        for cap in caps.get("add", []):
            args += ["--cap-add", cap]
        if sc.get("allowPrivilegeEscalation") is False:
            args += ["--security-opt", "no-new-privileges"]
        limits = c.get("resources", {}).get("limits", {})
        if "memory" in limits:
            args += ["--memory", str(quantity(limits["memory"]))]
        if "cpu" in limits:
            wanted = cpus(limits["cpu"])
            if wanted > os.cpu_count():
                self.notes.append(f"{c['name']}: CPU limit {limits['cpu']} lowered to this host's {os.cpu_count()}")
            args += ["--cpus", str(min(wanted, os.cpu_count()))]
        for m in c.get("volumeMounts", []):
            args += ["-v", f"{self.volumes[m['name']]}:{m['mountPath']}" + (":ro" if m.get("readOnly") else "")]
        return args

    def start(self, c, image, extra, env=None):
        name = f"{self.name}-{c['name']}"
        cmd = ["docker", "run", "-d", "--name", name] + extra + self.docker_args(c, privileged_ok())
        for k, v in (env or {}).items():
            cmd += ["-e", f"{k}={v}"]
        if c.get("command"):
            cmd += ["--entrypoint", c["command"][0]]
        cmd += [image] + c.get("command", [])[1:] + c.get("args", [])
        self.containers.append(name)
        run(cmd)
        return name

    def running(self, name):
        p = run(["docker", "inspect", "-f", "{{.State.Running}}", name], check=False)
        return p.stdout.strip() == "true"

    def close(self):
        for name in reversed(self.containers):
            run(["docker", "rm", "-f", name], check=False)
        for path in reversed(self.mounts):
            run(["umount", "-l", str(path)], check=False)


def privileged_ok():
    """Whether the host's engine can give a container every capability (its bounding set has them all)."""
    pid = run(["pgrep", "-xo", "dockerd"], check=False).stdout.strip()
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        bounding = int(re.search(r"CapBnd:\s*([0-9a-f]+)", status).group(1), 16)
        return bounding & (1 << 24) != 0  # CAP_SYS_RESOURCE
    except (OSError, AttributeError, ValueError):
        return False


# ---------------------------------------------------------------- the run

PROGRAM = """from pathlib import Path
names = sorted([p.name for p in Path("/documents").iterdir()])
hits = await search("oldest ship in the fleet", limit=5)
print("documents", names)
print("hit documents", sorted(set([h["document_id"] for h in hits])))
"""


def engine_image(results):
    base = run(["bash", str(ROOT / "sandbox-image/build-base.sh"), "--print-image"]).stdout.strip()
    run(["bash", str(ROOT / "sandbox-image/build-base.sh")])
    dockerfile = (ROOT / "scripts/pod-engine.Dockerfile").read_text()
    tag = "quarry-pod-engine:" + run(["sha256sum"], stdin=base + dockerfile).stdout[:12]
    if run(["docker", "image", "inspect", tag], check=False).returncode != 0:
        say(f"building {tag} from Debian's docker.io (docker:27-dind cannot be pulled here)")
        ctx = Path(tempfile.mkdtemp(prefix="quarry-pod-engine."))
        try:
            shutil.copy(ROOT / "scripts/pod-engine.Dockerfile", ctx / "Dockerfile")
            run(["docker", "build", "-q", "--network", "host", "--build-arg", f"BASE_IMAGE={base}", "-t", tag, str(ctx)])
        finally:
            shutil.rmtree(ctx)
    return tag


def sandbox_mounts(nested, pod_name):
    """Each of the pod's sandbox containers: its id and its /proc/self/mountinfo, read inside it."""
    ids = run(nested + ["ps", "-q", "--filter", f"label=quarry.gateway={pod_name}"]).stdout.split()
    return {i: run(nested + ["exec", i, "cat", "/proc/self/mountinfo"]).stdout for i in ids}


def mount_roots(mountinfo):
    """(root within its filesystem, mount point, device) of each line of a mountinfo."""
    out = []
    for line in mountinfo.splitlines():
        f = line.split(" ")
        if len(f) > 5:
            out.append((f[3], f[4], f[2]))
    return out


def check_pod(args, results):
    work = Path(tempfile.mkdtemp(prefix="quarry-pod-check."))
    os.chmod(work, 0o755)
    pod_name = f"quarry-gateway-podcheck-{os.getpid()}"
    db = f"quarry_pod_check_{os.getpid()}"
    http_port, metrics_port, registry_port, model_port = ports(4)
    cleanup = []
    try:
        objects = render(Path(args.k8s).resolve(), args.component, work)
        say(f"rendered {args.k8s} with kubectl kustomize ({run(['kubectl', 'version', '--client']).stdout.split(chr(10))[1].strip()})"
            f", components {args.component or 'none'}: {len(objects)} objects")
        config = static_checks(objects, results)

        say("building the gateway image (scripts/gateway-image.sh)")
        run([str(ROOT / "scripts/gateway-image.sh")])
        engine = engine_image(results)
        registry = Registry(work, registry_port, "quarry-pull", secrets.token_hex(12))
        cleanup.append(registry.close)
        # The image's layers go to the registry first under another name: the push of the real name
        # (once the pod has shown it is unready without it) then takes a second.
        source = os.environ.get("QUARRY_SANDBOX_IMAGE", "quarry-sandbox:latest")
        staging = f"{registry.address}/pod-check-staging/sandbox:{os.getpid()}"
        pushed = {}

        def stage():
            try:
                registry.push(source, staging)
            except Exception as e:  # reported when the real push needs it
                pushed["error"] = e

        pusher = threading.Thread(target=stage)
        pusher.start()
        cleanup.append(lambda: run(["docker", "image", "rm", staging], check=False))

        model = ScriptedModel(model_port, PROGRAM)
        cleanup.append(model.close)
        psql = ["psql", "-q", "-v", "ON_ERROR_STOP=1", "-h", PG["host"], "-p", PG["port"], "-U", PG["user"], "-d", "postgres"]
        pg_env = dict(os.environ, PGPASSWORD=PG["password"])
        run(psql + ["-c", f"CREATE DATABASE {db}"], env=pg_env)
        cleanup.append(lambda: run(psql + ["-c", f"DROP DATABASE IF EXISTS {db} WITH (FORCE)"], env=pg_env, check=False))

        admin_token = secrets.token_hex(16)
        secret_values = {("quarry-secrets", "pg-password"): PG["password"],
                         ("quarry-secrets", "pg-app-password"): PG["app_password"],
                         ("quarry-secrets", "admin-token"): admin_token,
                         ("quarry-secrets", "openai-api-key"): "pod-check-stand-in"}
        pod = Pod(objects, work, pod_name, secret_values,
                  {"quarry-sandbox-registry": {".dockerconfigjson": registry.dockerconfigjson()}})
        cleanup.append(pod.close)
        pod.make_volumes()

        # The engine, as the sidecar: its args, its volumes, the pod's network (the host's here).
        engine_c = pod.container(ENGINE)
        engine_name = pod.start(engine_c, engine, ["--network", "host"])
        probe = engine_c.get("readinessProbe", {}).get("exec", {}).get("command")
        wait_for(lambda: run(["docker", "exec", engine_name] + probe, check=False).returncode == 0, 60,
                 "the engine's readiness probe", alive=lambda: pod.running(engine_name))
        sock = next(v for k, v in pod.volumes.items() if (v / "docker.sock").exists()) / "docker.sock"
        nested = ["docker", "-H", f"unix://{sock}"]
        say(f"engine up: {run(nested + ['version', '-f', '{{.Server.Version}}']).stdout.strip()}, socket group"
            f" {os.stat(sock).st_gid}")

        gateway_c = pod.container(GATEWAY)
        env = environment(objects, gateway_c, secret_values, pod_name)
        image = env.get("QUARRY_SANDBOX_IMAGE", "quarry-sandbox:latest")
        first = image.split("/", 1)[0]
        path = image.split("/", 1)[1] if "/" in image and ("." in first or ":" in first or first == "localhost") else image
        local_image = f"{registry.address}/{path}"
        replaced = {"QUARRY_PG_HOST": PG["host"], "QUARRY_PG_PORT": PG["port"], "QUARRY_PG_DATABASE": db,
                    "QUARRY_HTTP_PORT": str(http_port), "QUARRY_METRICS_PORT": str(metrics_port),
                    "QUARRY_MODEL_BASE_URL": f"http://127.0.0.1:{model_port}/v1", "QUARRY_SANDBOX_IMAGE": local_image}
        say("addresses replaced: " + ", ".join(f"{k}={env.get(k, '(unset)')} -> {v}" for k, v in replaced.items()))
        env.update(replaced)
        ports_by_name = {p["name"]: p["containerPort"] for p in gateway_c.get("ports", [])}
        port_map = {ports_by_name.get("http", 8080): http_port, ports_by_name.get("metrics", 9464): metrics_port}

        def probe_url(name):
            get = gateway_c[name]["httpGet"]
            port = get["port"] if isinstance(get["port"], int) else ports_by_name[get["port"]]
            return f"http://127.0.0.1:{port_map[port]}{get['path']}"

        ready_url, live_url = probe_url("readinessProbe"), probe_url("livenessProbe")
        api = f"http://127.0.0.1:{http_port}"
        # QUARRY_GATEWAY_IMAGE: the image scripts/gateway-image.sh built under another name than the render's.
        gateway_image = os.environ.get("QUARRY_GATEWAY_IMAGE", gateway_c["image"])
        gateway_name = pod.start(gateway_c, gateway_image, ["--network", f"container:{engine_name}"], env)
        alive = lambda: pod.running(gateway_name)
        started = time.monotonic()
        wait_for(lambda: http_status(live_url) == 200, START_TIMEOUT_S, "the liveness probe", alive=alive)
        say(f"gateway alive after {time.monotonic() - started:.0f} s (as uid {run(['docker', 'exec', gateway_name, 'id', '-u']).stdout.strip()})")

        # Not ready while the registry lacks the image, and saying why.
        def unready_reason():
            status, body = http_json("GET", ready_url)
            detail = body.get("checks", {}).get("sandboxes", {}).get("detail", "") if isinstance(body, dict) else ""
            return (status, detail) if status != 200 and "failed" in detail else (status, None) if status == 200 else None

        status, detail = wait_for(unready_reason, 120, "a readiness answer", alive=alive)
        results.check(status == 503 and detail and local_image in detail, "not ready without the sandbox image",
                      f"503: {detail}", "/readyz answered 200 while the pod's engine lacks the sandbox image"
                      if status == 200 else str(detail))
        pusher.join()
        if "error" in pushed:
            raise pushed["error"]
        registry.push(source, local_image)
        cleanup.append(lambda: run(["docker", "image", "rm", local_image], check=False))
        say(f"pushed {source} as {local_image}")

        def has_image():
            return run(nested + ["image", "inspect", local_image], check=False).returncode == 0

        def ready_with_image():
            return http_status(ready_url) == 200 and has_image()

        try:
            wait_for(ready_with_image, 180, "ready once the registry has the image", alive=alive)
            _, body = http_json("GET", ready_url)
            results.ok("ready once the registry has the image",
                       body.get("checks", {}).get("sandboxes", {}).get("detail", "ready, and the engine has it"))
        except Fatal:
            _, body = http_json("GET", ready_url)
            checks = body.get("checks", {}) if isinstance(body, dict) else {}
            results.fail("ready once the registry has the image", ("the pod's engine never got the image; " if not has_image()
                         else "") + f"/readyz: {json.dumps(checks.get('sandboxes', checks))[:400]}")
            say("loading the image into the pod's engine by hand (docker save | docker load), to check the rest")
            subprocess.run(f"docker save {source} | {' '.join(nested)} load -q && {' '.join(nested)} tag {source}"
                           f" {local_image}", shell=True, check=True, capture_output=True)
            wait_for(ready_with_image, 120, "ready with the image loaded by hand", alive=alive)
        logs = run(["docker", "logs", gateway_name]).stdout
        pulled = [json.loads(l).get("formattedMessage", "") for l in logs.splitlines() if l.startswith("{") and "sandbox image" in l]
        results.check(any("pulled sandbox image" in m for m in pulled), "the pull is in the gateway's log",
                      "; ".join(m for m in pulled if "pull" in m)[:400], f"no pull in the log: {pulled}")
        scrape = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read().decode()
        counts = dict(re.findall(r'quarry_sandbox_image_pulls_total\{outcome="(\w+)"} ([0-9.]+)', scrape))
        results.check(float(counts.get("success", 0)) >= 1 and float(counts.get("failure", 0)) >= 1,
                      "the pulls are counted", f"quarry_sandbox_image_pulls_total {counts}", f"{counts}")
        results.check(http_status(f"{api}/metrics") == 404, "/metrics only on the metrics port", "the API's port answers 404",
                      "the API's port serves /metrics")

        # Ingest, then an analysis scoped to one of two documents.
        status, tenant = http_json("POST", f"{api}/v1/admin/tenants", {"name": "pod-check"}, token=admin_token)
        if status != 201:
            raise Fatal(f"creating a tenant: {status} {tenant}")
        key = tenant["api_key"]
        docs = []
        # POD_CHECK_EXTRA_DOCUMENT: one more file to ingest, for the documents volume's figures.
        extra = [Path(os.environ["POD_CHECK_EXTRA_DOCUMENT"])] if os.environ.get("POD_CHECK_EXTRA_DOCUMENT") else []
        for f in [ROOT / "examples/corpus/fleet-handbook.md", ROOT / "examples/corpus/service-notice-2025-11.txt"] + extra:
            body, ctype = multipart(f)
            status, doc = http_json("POST", f"{api}/v1/documents", body, token=key, content_type=ctype, timeout=1800)
            if status not in (200, 201):
                raise Fatal(f"ingesting {f}: {status} {doc}")
            docs.append(doc["id"])
        results.ok("ingest", f"{len(docs)} documents through POST /v1/documents")
        text = tree = 0
        for d in docs:
            for part in ("content", "items", "toc"):
                with urllib.request.urlopen(urllib.request.Request(f"{api}/v1/documents/{d}/{part}",
                                            headers={"Authorization": f"Bearer {key}"}), timeout=60) as r:
                    size = len(r.read())
                tree += size
                text += size if part == "content" else 0
        say(f"the documents' trees (content.txt, items.jsonl, toc.json): {tree / 1024:.0f} KiB for {text / 1024:.0f} KiB"
            f" of text, {tree / max(text, 1):.2f}x")
        stored = len(docs)
        # A program over the whole tenant: its sandbox mounts the tenant's tree, and the warm pool
        # then keeps sandboxes like it, which are read below with the analysis' own.
        status, ran = http_json("POST", f"{api}/v1/executions", {"code": "print(len(await list_documents()))"}, token=key,
                                timeout=120)
        results.check(status == 200 and ran.get("success") and ran.get("stdout") == f"{stored}\n",
                      "a program over the tenant's documents", f"printed {stored}", f"{status} {str(ran)[:300]}")
        answer = {}
        ask = threading.Thread(target=lambda: answer.update(zip(("status", "body"), http_json(
            "POST", f"{api}/v1/analyses", {"question": "Which ship is the oldest?", "document_ids": [docs[0]]},
            token=key, timeout=300))))
        ask.start()
        wait_for(lambda: model.tool_results, 120, "the analysis' program to run", alive=alive)
        mounts = sandbox_mounts(nested, pod_name)
        model.looked.set()
        ask.join(300)
        out = model.tool_results[0]
        scoped_ok = f"documents ['{docs[0]}']" in out.get("stdout", "") and docs[1] not in out.get("stdout", "")
        results.check(answer.get("status") in (200, 201) and answer["body"].get("status") == "succeeded" and scoped_ok,
                      "an analysis scoped to one document", out.get("stdout", "").strip().replace("\n", "; "),
                      f"{answer.get('status')} {str(answer.get('body'))[:300]}; program output {out}")

        # No host path in any sandbox's mountinfo: nothing from this check's directory on the host.
        host = str(work)
        shown = [(cid[:12], root, point) for cid, info in mounts.items() for root, point, _ in mount_roots(info)
                 if root.startswith(host) or root.startswith("/var/lib/docker/") or root.startswith("/var/lib/kubelet")]
        results.check(mounts and not shown, "no host path in a sandbox's mountinfo",
                      f"{len(mounts)} sandboxes read (warm and scoped): /documents, /run/quarry and /etc/hosts show only"
                      " paths within their volumes",
                      f"{len(mounts)} sandboxes read; host paths shown: " + "; ".join(f"{c} {p} <- {r}" for c, r, p in shown[:6]))
        for cid, info in mounts.items():
            roots = {point: (root, dev) for root, point, dev in mount_roots(info)}
            if "/documents" in roots and "/run/quarry" in roots and roots["/documents"][1] == roots["/run/quarry"][1]:
                results.fail("scoped documents outside the run directory's volume", f"sandbox {cid[:12]}'s /documents is"
                             f" {roots['/documents'][0]} on the run directory's filesystem: a scoped document is copied"
                             " there, and one larger than that volume's sizeLimit cannot be scoped")
                break
        else:
            results.ok("scoped documents outside the run directory's volume")
        for name in ("documents", "dind-storage"):
            if name in pod.volumes and os.path.ismount(pod.volumes[name]):
                st = os.statvfs(pod.volumes[name])
                say(f"volume {name}: {(st.f_blocks - st.f_bfree) * st.f_frsize / 2**20:.1f} MiB used")

        grace = int(pod.spec.get("terminationGracePeriodSeconds", 30))
        t = time.monotonic()
        run(["docker", "stop", "-t", str(grace), gateway_name], timeout=grace + 30)
        code = run(["docker", "inspect", "-f", "{{.State.ExitCode}}", gateway_name]).stdout.strip()
        left = run(nested + ["ps", "-aq", "--filter", f"label=quarry.gateway={pod_name}"]).stdout.split()
        results.check(code == "0" and not left, "SIGTERM", f"exit 0 after {time.monotonic() - t:.1f} s, no sandbox left",
                      f"exit {code}, {len(left)} sandbox(es) left")
        for note in pod.notes:
            say(f"note: {note}")
    except Fatal as e:
        results.fail("the run", str(e))
    except Exception as e:  # a step that could not be carried out fails the check, naming it
        results.fail("the run", f"{type(e).__name__}: {e}")
    finally:
        failed = bool(results.failed())
        for name in [f"{pod_name}-{GATEWAY}"] if failed else []:
            tail = run(["docker", "logs", "--tail", "25", name], check=False)
            if tail.returncode == 0:
                print("--- last lines of the gateway's log ---\n" + (tail.stdout + tail.stderr)[-4000:], flush=True)
        if args.keep:
            say(f"kept {work} and the containers (--keep)")
        else:
            for step in reversed(cleanup):
                try:
                    step()
                except Exception as e:  # cleanup goes on: the next step may still free something
                    say(f"cleanup: {e}")
            shutil.rmtree(work, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--k8s", default=str(ROOT / "k8s"), help="the k8s/ directory to render (default: this checkout's)")
    parser.add_argument("--component", action="append", help="a component of DIR/components to add (repeatable;"
                        " default: autoscaling and ingress)")
    parser.add_argument("--keep", action="store_true", help="leave the containers and files for a look")
    args = parser.parse_args()
    if args.component is None:
        args.component = [c for c in ("autoscaling", "ingress") if (Path(args.k8s) / "components" / c).is_dir()]
    if os.geteuid() != 0:
        sys.exit("pod-check: must run as root (it mounts the pod's volumes and runs an engine)")
    missing = [f"{tool} ({how})" for tool, how in [
        ("kubectl", "kubectl with kustomize v5, which renders offline; Debian 12's is too old"),
        ("docker-registry", "./quarry setup installs it"), ("htpasswd", "apache2-utils, ./quarry setup installs it"),
        ("psql", "./quarry setup installs PostgreSQL"), ("docker", "./quarry setup installs it")] if not shutil.which(tool)]
    if missing:
        sys.exit("pod-check: missing " + "; ".join(missing))
    started = time.monotonic()
    results = Results()
    check_pod(args, results)
    say(f"done in {time.monotonic() - started:.0f} s")
    say("not checked here, a cluster would: " + "; ".join(CANNOT))
    failed = results.failed()
    if failed:
        say(f"{len(failed)} of {len(results.items)} checks FAILED: " + "; ".join(n for _, n, _ in failed))
        sys.exit(1)
    say(f"all {len(results.items)} checks passed")


if __name__ == "__main__":
    main()
