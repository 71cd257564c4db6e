package dev.quarry.search;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntSupplier;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * How the search copies' builds give way to searches. A build's loops call {@link #step} (once per
 * row taken in, once per vector added to a graph); while any search is under way in this process, a
 * build thread works at most one part in {@link #SHARE} of the time (slices of {@link #SLICE_NANOS},
 * each followed by a sleep {@code SHARE - 1} times as long); with no search under way it runs flat
 * out.
 *
 * <p>Thread priorities cannot do this: Linux JVMs ignore them unless run as root with
 * {@code -XX:ThreadPriorityPolicy=1}. Without it, after a restart, nine tenants' first searches set
 * off builds that took a fair share of both cores: a quiet tenant's p50/p99 went from 4/23 ms to
 * 80/360 ms, worse than with no copies at all (red team round 4, R4-4).
 *
 * <p>{@link #step} does something only on the copies' own threads ({@link #onThisThread}); anywhere
 * else (a test building a copy directly, an event loop) it returns at once and never sleeps.
 */
final class BuildPace {
  /** How long a build works before it looks whether to give way. */
  static final long SLICE_NANOS = 2_000_000L;
  /** While searches run, a build thread has at most one part in this many of its time. */
  static final int SHARE = 4;

  private static final AtomicInteger SEARCHES = new AtomicInteger();
  private static final ThreadLocal<BuildPace> PACE = new ThreadLocal<>();

  private final LongSupplier clock;
  private final LongConsumer sleep;
  private final IntSupplier searches;
  private long sliceStart;

  BuildPace(LongSupplier clock, LongConsumer sleep, IntSupplier searches) {
    this.clock = clock;
    this.sleep = sleep;
    this.searches = searches;
    this.sliceStart = clock.getAsLong();
  }

  /** Makes the calling thread (one of the copies' own) pace its builds against this process's searches. */
  static void onThisThread() {
    PACE.set(new BuildPace(System::nanoTime, LockSupport::parkNanos, SEARCHES::get));
  }

  /** A search began: builds give way until it ends. Every call is matched by one {@link #searchEnded}. */
  static void searchStarted() {
    SEARCHES.incrementAndGet();
  }

  static void searchEnded() {
    SEARCHES.decrementAndGet();
  }

  /** Searches under way in this process. */
  static int searches() {
    return SEARCHES.get();
  }

  /** Whether the calling thread paces its work (it is one of the copies' threads). */
  static boolean paced() {
    return PACE.get() != null;
  }

  /** One unit of a build's work done: gives way to searches when the slice is used up. */
  static void step() {
    BuildPace pace = PACE.get();
    if (pace != null) {
      pace.stepped();
    }
  }

  void stepped() {
    long now = clock.getAsLong();
    long worked = now - sliceStart;
    if (worked < SLICE_NANOS) {
      return;
    }
    if (searches.getAsInt() > 0) {
      sleep.accept(worked * (SHARE - 1));
      now = clock.getAsLong();
    }
    sliceStart = now;
  }
}
