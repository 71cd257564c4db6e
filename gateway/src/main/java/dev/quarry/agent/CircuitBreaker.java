package dev.quarry.agent;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * Stops calling an endpoint that keeps failing. After {@code threshold} consecutive failures it
 * opens and fails calls at once for {@code cooldown}; then it lets one trial call through, whose
 * outcome closes it again or re-opens it. Shared by every analysis of the gateway, since they all
 * talk to the same endpoint.
 */
final class CircuitBreaker {
  enum State { CLOSED, OPEN, HALF_OPEN }

  private final int threshold;
  private final Duration cooldown;
  private final Clock clock;
  private int consecutiveFailures;
  private Instant openUntil = Instant.MIN;
  private boolean trialInFlight;

  CircuitBreaker(int threshold, Duration cooldown, Clock clock) {
    this.threshold = threshold;
    this.cooldown = cooldown;
    this.clock = clock;
  }

  /** Fails with ModelUnavailable while open (or while another call is the half-open trial). */
  synchronized void acquire() {
    if (consecutiveFailures < threshold) {
      return;
    }
    Instant now = clock.instant();
    if (now.isBefore(openUntil) || trialInFlight) {
      long waitS = Math.max(1, Duration.between(now, openUntil).toSeconds());
      throw new ModelFailure("ModelUnavailable", "the model endpoint failed " + consecutiveFailures
          + " times in a row; calls are paused (circuit breaker open) for about " + waitS + " s more");
    }
    trialInFlight = true;
  }

  synchronized void succeeded() {
    consecutiveFailures = 0;
    trialInFlight = false;
  }

  synchronized void failed() {
    consecutiveFailures++;
    trialInFlight = false;
    if (consecutiveFailures >= threshold) {
      openUntil = clock.instant().plus(cooldown);
    }
  }

  /** A call that ended without telling anything about the endpoint's health (e.g. cancelled). */
  synchronized void released() {
    trialInFlight = false;
  }

  synchronized State state() {
    if (consecutiveFailures < threshold) {
      return State.CLOSED;
    }
    return clock.instant().isBefore(openUntil) ? State.OPEN : State.HALF_OPEN;
  }
}
