package dev.quarry.gateway;

import dev.quarry.telemetry.LogContext;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.MDC;

@DisplayName("Logs: one JSON object per line, with the tenant and analysis ids of the work at hand")
class LoggingTest {

  @Test
  @DisplayName("the production logback.xml writes JSON lines carrying the ids LogContext puts in the MDC")
  void jsonWithIds() throws Exception {
    UUID tenant = UUID.randomUUID();
    UUID analysis = UUID.randomUUID();
    List<String> lines = capture(log -> {
      LogContext.run(tenant, analysis, () -> log.info("analysis finished after {} steps", 3));
      log.warn("outside any analysis");
    });

    assertThat(lines).hasSize(2);
    JsonObject inside = new JsonObject(lines.get(0));
    assertThat(inside.getString("level")).isEqualTo("INFO");
    assertThat(inside.getString("loggerName")).isEqualTo("dev.quarry.test");
    assertThat(inside.getString("formattedMessage")).isEqualTo("analysis finished after 3 steps");
    assertThat(inside.getJsonObject("mdc").getString("tenant_id")).isEqualTo(tenant.toString());
    assertThat(inside.getJsonObject("mdc").getString("analysis_id")).isEqualTo(analysis.toString());
    assertThat(inside.getLong("timestamp")).isPositive();

    JsonObject outside = new JsonObject(lines.get(1));
    assertThat(outside.getString("level")).isEqualTo("WARN");
    assertThat(outside.getJsonObject("mdc", new JsonObject()).fieldNames()).doesNotContain("tenant_id", "analysis_id");
    assertThat(MDC.get(LogContext.TENANT)).isNull();
  }

  @Test
  @DisplayName("LogContext restores the ids that were there before, for nested work")
  void nested() {
    UUID outer = UUID.randomUUID();
    UUID inner = UUID.randomUUID();
    LogContext.run(outer, null, () -> {
      LogContext.run(inner, UUID.randomUUID(), () -> assertThat(MDC.get(LogContext.TENANT)).isEqualTo(inner.toString()));
      assertThat(MDC.get(LogContext.TENANT)).isEqualTo(outer.toString());
      assertThat(MDC.get(LogContext.ANALYSIS)).isNull();
    });
    assertThat(MDC.get(LogContext.TENANT)).isNull();
  }

  /** Logs through a logger context configured from the production logback.xml, capturing stdout. */
  private static List<String> capture(java.util.function.Consumer<Logger> body) throws Exception {
    PrintStream original = System.out;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    LoggerContext context = new LoggerContext();
    // The same MDC that slf4j's MDC (and so LogContext) writes to.
    context.setMDCAdapter(MDC.getMDCAdapter());
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    try {
      JoranConfigurator configurator = new JoranConfigurator();
      configurator.setContext(context);
      configurator.doConfigure(LoggingTest.class.getResource("/logback.xml"));
      body.accept(context.getLogger("dev.quarry.test"));
    } finally {
      context.stop();
      System.setOut(original);
    }
    return out.toString(StandardCharsets.UTF_8).lines().filter(l -> !l.isBlank()).toList();
  }
}
