package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * {@link BuildPace}: a copy's build gives way to searches under way (red team round 4, R4-4), on a
 * clock the test moves, so what it asserts is the rule, not a machine's timing.
 */
@DisplayName("Copies' builds give way to searches")
class BuildPaceTest {
  final AtomicLong clock = new AtomicLong(1_000_000_000L);
  final AtomicInteger searches = new AtomicInteger();
  final List<Long> slept = new ArrayList<>();
  final BuildPace pace = new BuildPace(clock::get, nanos -> {
    slept.add(nanos);
    clock.addAndGet(nanos);
  }, searches::get);

  /** One step of a build that took {@code nanos}. */
  void work(long nanos) {
    clock.addAndGet(nanos);
    pace.stepped();
  }

  @Test
  @DisplayName("with no search under way a build never sleeps, however long it works")
  void flatOutWhenIdle() {
    for (int i = 0; i < 10_000; i++) {
      work(100_000);
    }
    assertThat(slept).isEmpty();
  }

  @Test
  @DisplayName("while a search runs, a build works one part in SHARE of the time: a slice, then"
      + " SHARE - 1 slices asleep")
  void quarterWhileSearching() {
    searches.set(1);
    long start = clock.get();
    long worked = 0;
    for (int i = 0; i < 1_000; i++) {
      work(100_000); // 0.1 ms a step: 20 steps a slice
      worked += 100_000;
    }
    assertThat(slept).hasSize(1_000 / 20).allSatisfy(s ->
        assertThat(s).isEqualTo((BuildPace.SHARE - 1) * BuildPace.SLICE_NANOS));
    assertThat((double) worked / (clock.get() - start)).isEqualTo(1.0 / BuildPace.SHARE);
  }

  @Test
  @DisplayName("a step longer than a slice (a large graph insert, a pause) is paid back in proportion")
  void longStepPaidBack() {
    searches.set(3);
    work(50_000_000);
    assertThat(slept).containsExactly((BuildPace.SHARE - 1) * 50_000_000L);
  }

  @Test
  @DisplayName("the slice in progress when searches stop and start again counts from the last look")
  void searchesComeAndGo() {
    work(BuildPace.SLICE_NANOS); // idle: the slice ends, no sleep
    searches.set(1);
    work(BuildPace.SLICE_NANOS / 2);
    assertThat(slept).isEmpty();
    work(BuildPace.SLICE_NANOS / 2);
    assertThat(slept).containsExactly((BuildPace.SHARE - 1) * BuildPace.SLICE_NANOS);
    searches.set(0);
    work(BuildPace.SLICE_NANOS * 5);
    assertThat(slept).hasSize(1);
  }

  @Test
  @DisplayName("only the copies' own threads pace: an event loop or a caller's thread never sleeps in a step")
  void onlyCopiesThreadsPace() throws Exception {
    assertThat(BuildPace.paced()).as("the test's thread").isFalse();
    assertThat(new TenantCopies(null, 1, System::nanoTime).onMaker(BuildPace::paced).toCompletionStage().toCompletableFuture()
        .get(30, TimeUnit.SECONDS)).as("a copies' thread").isTrue();
  }
}
