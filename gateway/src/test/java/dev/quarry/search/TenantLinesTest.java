package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Each tenant's ingests take their turns in a line of their own")
class TenantLinesTest {
  private final TenantLines lines = new TenantLines(2);
  private final List<String> started = new ArrayList<>();
  private final Map<String, Promise<String>> running = new HashMap<>();

  private Supplier<Future<String>> work(String name) {
    return () -> {
      started.add(name);
      Promise<String> p = Promise.promise();
      running.put(name, p);
      return p.future();
    };
  }

  @Test
  @DisplayName("past its turns a tenant's ingests wait, in order, while another tenant's start at once")
  void onePerTurn() {
    UUID noisy = UUID.randomUUID();
    UUID quiet = UUID.randomUUID();
    List<Future<String>> done = new ArrayList<>();
    for (int i = 1; i <= 4; i++) {
      done.add(lines.run(noisy, work("n" + i)));
    }
    Future<String> q1 = lines.run(quiet, work("q1"));
    assertThat(started).containsExactly("n1", "n2", "q1");

    running.get("n2").complete("n2 done");
    assertThat(done.get(1).result()).isEqualTo("n2 done");
    assertThat(started).containsExactly("n1", "n2", "q1", "n3");

    running.get("n1").fail("conversion failed");
    assertThat(done.get(0).cause()).hasMessage("conversion failed");
    assertThat(started).as("a failure passes the turn on").containsExactly("n1", "n2", "q1", "n3", "n4");

    running.get("q1").complete("q1 done");
    assertThat(q1.result()).isEqualTo("q1 done");
  }

  @Test
  @DisplayName("work that throws instead of failing its future still ends and passes its turn on")
  void throwingWork() {
    UUID tenant = UUID.randomUUID();
    Future<String> first = lines.run(tenant, work("t1"));
    Future<String> thrown = lines.run(tenant, () -> {
      throw new IllegalStateException("broken before it began");
    });
    Future<String> third = lines.run(tenant, work("t3"));
    assertThat(thrown.cause()).hasMessage("broken before it began");
    assertThat(started).containsExactly("t1", "t3");
    running.get("t1").complete("ok");
    running.get("t3").complete("ok");
    assertThat(first.succeeded()).isTrue();
    assertThat(third.succeeded()).isTrue();
  }
}
