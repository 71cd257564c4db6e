package dev.quarry.tenancy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

/**
 * The bucket behind callbacks_per_minute: reservations come first come, first served, never faster
 * than the rate after the burst, and a refused one takes nothing.
 */
@Label("A token bucket's reservations")
class TokenBucketTest {

  @Property(tries = 300)
  @Label("turns are first come, first served; by any time, no more turns have come than the burst plus the rate's"
      + " worth; a refusal takes nothing")
  void reservationsKeepTheRate(@ForAll @IntRange(min = 1, max = 6000) int perMinute,
      @ForAll @IntRange(min = 1, max = 200) int burst,
      @ForAll @Size(min = 1, max = 300) List<@LongRange(min = 0, max = 2000) Long> gaps,
      @ForAll @Size(min = 1, max = 300) List<@LongRange(min = 0, max = 60_000) Long> waits) {
    long start = 1_000_000;
    long now = start;
    TokenBucket bucket = new TokenBucket(perMinute, burst, now);
    // Asked only for the calls the first one granted: were a refusal to take anything, they would part.
    TokenBucket granted = new TokenBucket(perMinute, burst, now);
    long lastTurn = Long.MIN_VALUE;
    List<Long> turns = new ArrayList<>();
    int n = Math.min(gaps.size(), waits.size());
    for (int i = 0; i < n; i++) {
      now += gaps.get(i);
      long maxWait = waits.get(i);
      long wait = bucket.reserve(now, maxWait);
      if (wait < 0) {
        continue;
      }
      assertThat(wait).isLessThanOrEqualTo(maxWait);
      assertThat(wait).as("the wait, as if no refused call had been asked").isCloseTo(
          granted.reserve(now, Long.MAX_VALUE), org.assertj.core.data.Offset.offset(1L));
      long turn = now + wait;
      assertThat(turn).as("first come, first served").isGreaterThanOrEqualTo(lastTurn);
      lastTurn = turn;
      turns.add(turn);
    }
    // By the time of each turn, at most the burst plus what the rate refilled since the start have come.
    for (int k = 0; k < turns.size(); k++) {
      long t = turns.get(k);
      double allowed = burst + (t - start) * perMinute / 60_000.0;
      assertThat(k + 1.0).as("turns by %d ms", t - start).isLessThanOrEqualTo(allowed + 1e-6);
    }
  }

  @Property(tries = 100)
  @Label("within the burst, turns come at once; the next one waits a token's time")
  void burstThenRate(@ForAll @IntRange(min = 1, max = 6000) int perMinute, @ForAll @IntRange(min = 1, max = 100) int burst) {
    TokenBucket bucket = new TokenBucket(perMinute, burst, 0);
    for (int i = 0; i < burst; i++) {
      assertThat(bucket.reserve(0, 0)).isZero();
    }
    assertThat(bucket.reserve(0, 0)).as("past the burst, with no wait allowed").isEqualTo(-1);
    long wait = bucket.reserve(0, Long.MAX_VALUE);
    assertThat(wait).isEqualTo((long) Math.ceil(60_000.0 / perMinute));
  }
}
