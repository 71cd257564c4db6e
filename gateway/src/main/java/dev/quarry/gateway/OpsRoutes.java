package dev.quarry.gateway;

import dev.quarry.api.ProtocolErrors;
import dev.quarry.telemetry.QuarryMetrics;

import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * The operator's endpoints: {@code /healthz} (the process is alive) and {@code /readyz} (it should get
 * traffic: every readiness check passes and it is not draining), on the API's port for the
 * orchestrator's probes; and {@code /metrics} (Prometheus) on a port of its own
 * ({@code QUARRY_METRICS_PORT}). The metrics name no tenant, but they are every tenant's traffic
 * summed (requests, searches, executions, the memory of the search copies): on the API's port any
 * client could watch the others' activity; on a port of its own the network keeps them to the
 * monitoring system (k8s/base/networkpolicy.yaml).
 */
public final class OpsRoutes {
  private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  private final Readiness readiness;
  private final Lifecycle lifecycle;
  private final QuarryMetrics metrics;

  public OpsRoutes(Readiness readiness, Lifecycle lifecycle, QuarryMetrics metrics) {
    this.readiness = readiness;
    this.lifecycle = lifecycle;
    this.metrics = metrics;
  }

  /** The probes, on the API's router. */
  public void mountProbes(Router router) {
    router.get("/healthz").handler(this::healthz);
    router.get("/readyz").handler(this::readyz);
  }

  /** {@code GET /metrics}, on the metrics port's router (which serves only it and the probes). */
  public void mountMetrics(Router router) {
    router.get("/metrics").handler(this::metrics);
  }

  private void healthz(RoutingContext ctx) {
    reply(ctx, 200, new JsonObject().put("status", "alive"));
  }

  private void readyz(RoutingContext ctx) {
    readiness.evaluate().onComplete(done -> {
      Readiness.Report report = done.result();
      JsonObject body = report.json().put("lifecycle", lifecycle.state().name().toLowerCase(java.util.Locale.ROOT));
      boolean ready = report.ready() && lifecycle.accepting();
      if (!ready) {
        body.put("status", "not_ready");
      }
      reply(ctx, ready ? 200 : 503, body);
    });
  }

  private void metrics(RoutingContext ctx) {
    ctx.response().putHeader(HttpHeaders.CONTENT_TYPE, PROMETHEUS_TEXT).end(metrics.scrape());
  }

  private static void reply(RoutingContext ctx, int status, JsonObject body) {
    if (ProtocolErrors.answered(ctx.response())) {
      return; // refused for breaking HTTP (its chunked body) while the readiness checks ran
    }
    ctx.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(body.encode());
  }
}
