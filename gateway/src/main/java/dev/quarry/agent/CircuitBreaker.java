package dev.quarry.agent;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * Stops calling an endpoint that keeps failing. After {@code threshold} consecutive failures it
 * opens for {@code cooldown}: no call goes out; then it lets one trial call through, whose outcome
 * closes it again or re-opens it. Shared by every analysis of the gateway, since they all talk to the
 * same endpoint. It spares the endpoint, not the callers: {@link ModelClient} waits for the next
 * trial when the analysis' time budget allows, and fails at once only when it does not.
 */
final class CircuitBreaker {
  enum State { CLOSED, OPEN, HALF_OPEN }

  /** How often a call waiting on another's half-open trial asks again. */
  static final Duration TRIAL_POLL = Duration.ofMillis(200);

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
    Optional<Duration> wait = tryAcquire();
    if (wait.isPresent()) {
      throw paused(wait.get());
    }
  }

  /**
   * Lets the call go (empty) when closed, or as the half-open trial; otherwise says how long to wait
   * before asking again: until the cool-down ends, or a moment while another call is the trial.
   */
  synchronized Optional<Duration> tryAcquire() {
    if (consecutiveFailures < threshold) {
      return Optional.empty();
    }
    Instant now = clock.instant();
    if (now.isBefore(openUntil)) {
      return Optional.of(Duration.between(now, openUntil));
    }
    if (trialInFlight) {
      return Optional.of(TRIAL_POLL);
    }
    trialInFlight = true;
    return Optional.empty();
  }

  /** The failure of a call that cannot wait {@code wait} for the breaker. */
  synchronized ModelFailure paused(Duration wait) {
    long waitS = Math.max(1, (wait.toMillis() + 999) / 1000);
    return new ModelFailure("ModelUnavailable", "the model endpoint failed " + consecutiveFailures
        + " times in a row; calls are paused (circuit breaker open) for about " + waitS + " s more");
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
