"""Held in round 6: /metrics is not served on the API port under any spelling tried (no key sent)."""
import r6_rt as rt
targets = ["/metrics", "/metrics/", "//metrics", "/METRICS", "/Metrics", "/%6detrics", "/%6Detrics", "/./metrics",
           "/x/../metrics", "/metrics?x=1", "/metrics#x", "/metrics;x", "/metrics%00", "/metrics%2f", "\\metrics",
           "http://127.0.0.1/metrics", "http://127.0.0.1:%d/metrics" % (rt.PORT + 1000), "*", "/healthz/../metrics",
           "/%2e/metrics", "/metrics.", "/metrics~", "/ metrics", "metrics"]
for proto in ("HTTP/1.1", "HTTP/1.0"):
    for t in targets:
        out = rt.raw(("GET %s %s\r\nHost: x\r\nConnection: close\r\n\r\n" % (t, proto)).encode(), timeout=5)
        head = out.split(b"\r\n", 1)[0].decode(errors="replace")
        leak = b"quarry_" in out or b"jvm_" in out or b"vertx_" in out
        print("%-8s %-40r %-32s %s" % (proto, t, head, "LEAK" if leak else ""))
