package dev.quarry.support;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Waits for a condition the system under test reaches on its own (a container removed, a file
 * deleted, a session open), checking it every 20 ms, and fails naming what did not happen in time.
 */
public final class Await {
  private Await() {}

  public static void until(BooleanSupplier condition, Duration limit, String what) {
    long deadline = System.nanoTime() + limit.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out after " + limit.toSeconds() + " s waiting for " + what);
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError("interrupted while waiting for " + what, e);
      }
    }
  }
}
