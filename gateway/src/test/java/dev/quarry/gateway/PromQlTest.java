package dev.quarry.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Metric names in PromQL, as the monitoring check reads them")
class PromQlTest {
  @Test
  @DisplayName("finds the series and leaves out functions, labels, ranges, groupings, keywords and numbers")
  void names() {
    assertThat(PromQl.metricNames(
        "histogram_quantile(0.99, sum by (le, route) (rate(vertx_http_server_response_time_seconds_bucket"
            + "{instance=~\"$instance\",code=~\"5..\"}[$__rate_interval]))) > 14.4 * 0.01 "
            + "and on (instance) quarry:http_slow_ratio:rate5m unless up offset 5m"))
        .containsExactly("quarry:http_slow_ratio:rate5m", "up", "vertx_http_server_response_time_seconds_bucket");
  }

  @Test
  @DisplayName("a misspelt metric is reported as a name, so the existence check catches it")
  void misspelt() {
    assertThat(PromQl.metricNames("sum(rate(quarry_ingest_documets_total[5m])) / 1e3"))
        .containsExactly("quarry_ingest_documets_total");
  }
}
