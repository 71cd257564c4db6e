package dev.quarry.gateway;

import dev.quarry.telemetry.QuarryMetrics;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * What {@code /readyz} asks: a list of named checks, each a probe that succeeds with a short detail
 * or fails with the reason. Parts of the gateway add their own (the database and Docker here; the
 * agent adds its model endpoint). Each probe gets a time limit, so that a hung dependency makes the
 * gateway unready instead of hanging the probe.
 */
public final class Readiness {
  static final long PROBE_TIMEOUT_MS = 3_000;

  /** @param required whether a failure makes the gateway unready, or is only reported */
  private record Check(String name, Supplier<Future<String>> probe, boolean required) {}

  private final Vertx vertx;
  private final List<Check> checks = new CopyOnWriteArrayList<>();
  private final Map<String, Supplier<Object>> infos = new ConcurrentHashMap<>();

  private final QuarryMetrics metrics;

  public Readiness(Vertx vertx, QuarryMetrics metrics) {
    this.vertx = vertx;
    this.metrics = metrics;
  }

  /** Adds a check; the probe's success value is shown as its detail. */
  public void add(String name, Supplier<Future<String>> probe) {
    checks.add(new Check(name, probe, true));
  }

  /**
   * Adds a check that is reported (and exported as quarry_dependency_up) but never makes the gateway
   * unready: for a dependency only some of the API needs, where taking the whole gateway out of
   * service would also stop what works without it.
   */
  public void advise(String name, Supplier<Future<String>> probe) {
    checks.add(new Check(name, probe, false));
  }

  /** Adds a value shown beside the checks (progress of background work, versions); never a check. */
  public void info(String key, Supplier<Object> value) {
    infos.put(key, value);
  }

  /** The report of every check: {@code {ready, checks: {name: {ok, detail}}}}. */
  public Future<Report> evaluate() {
    List<Future<JsonObject>> results = new ArrayList<>();
    for (Check check : checks) {
      results.add(probe(check));
    }
    return Future.join(results).transform(ignored -> {
      JsonObject details = new JsonObject();
      boolean ready = true;
      for (int i = 0; i < checks.size() && i < results.size(); i++) {
        JsonObject result = results.get(i).result();
        details.put(checks.get(i).name(), checks.get(i).required() ? result : result.copy().put("required", false));
        ready &= result.getBoolean("ok") || !checks.get(i).required();
      }
      JsonObject info = new JsonObject();
      infos.forEach((key, value) -> info.put(key, value.get()));
      return Future.succeededFuture(new Report(ready, details, info));
    });
  }

  private Future<JsonObject> probe(Check check) {
    Future<String> probe;
    try {
      probe = check.probe().get();
    } catch (RuntimeException e) {
      probe = Future.failedFuture(e);
    }
    return probe.timeout(PROBE_TIMEOUT_MS, TimeUnit.MILLISECONDS)
        .map(detail -> new JsonObject().put("ok", true).put("detail", detail))
        .otherwise(e -> new JsonObject().put("ok", false).put("detail", message(e)))
        .onSuccess(result -> metrics.dependencyUp(check.name(), result.getBoolean("ok")));
  }

  /** A failed probe's reason as anyone may read it (/readyz takes no key): its first line, no host path. */
  private static String message(Throwable e) {
    String m = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
    return dev.quarry.config.HostPaths.redact(m.lines().findFirst().orElse(m));
  }

  public record Report(boolean ready, JsonObject checks, JsonObject info) {
    public JsonObject json() {
      return info.copy().put("status", ready ? "ready" : "not_ready").put("checks", checks);
    }

    public boolean passed(String check) {
      Object c = checks.getValue(check);
      return c instanceof JsonObject o && o.getBoolean("ok", false);
    }
  }
}
