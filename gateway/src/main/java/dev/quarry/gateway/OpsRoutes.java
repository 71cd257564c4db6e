package dev.quarry.gateway;

import dev.quarry.telemetry.QuarryMetrics;

import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * The operator's endpoints: {@code /healthz} (the process is alive), {@code /readyz} (it should get
 * traffic: every readiness check passes and it is not draining) and {@code /metrics} (Prometheus).
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

  public void mount(Router router) {
    router.get("/healthz").handler(this::healthz);
    router.get("/readyz").handler(this::readyz);
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
    ctx.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(body.encode());
  }
}
