package dev.quarry.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Gauge;
import java.lang.ref.WeakReference;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("The gauge of the search copies' heap keeps reading after a garbage collection")
class TermIndexGaugeTest {
  @Test
  @DisplayName("a supplier only the gauge holds is not collected: the gauge reads its value, not NaN")
  void survivesCollection() {
    QuarryMetrics metrics = new QuarryMetrics();
    java.util.function.LongSupplier supplier = new java.util.function.LongSupplier() {
      @Override
      public long getAsLong() {
        return 4_242;
      }
    };
    WeakReference<Object> watch = new WeakReference<>(supplier);
    metrics.termIndexBytes(supplier);
    supplier = null;
    for (int i = 0; i < 5; i++) {
      System.gc();
    }
    Gauge gauge = metrics.registry().find("quarry_search_term_index_bytes").gauge();
    assertThat(gauge).isNotNull();
    assertThat(watch.get()).as("the supplier is still reachable").isNotNull();
    assertThat(gauge.value()).isEqualTo(4_242.0);
  }

  @Test
  @DisplayName("the gauge of copies being built reads its supplier, also after a garbage collection")
  void buildsGauge() {
    QuarryMetrics metrics = new QuarryMetrics();
    java.util.concurrent.atomic.AtomicInteger builds = new java.util.concurrent.atomic.AtomicInteger(2);
    metrics.copyBuilds(builds::get);
    for (int i = 0; i < 5; i++) {
      System.gc();
    }
    Gauge gauge = metrics.registry().find("quarry_search_copy_builds").gauge();
    assertThat(gauge).isNotNull();
    assertThat(gauge.value()).isEqualTo(2.0);
    builds.set(0);
    assertThat(gauge.value()).isZero();
  }
}
