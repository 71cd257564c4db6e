package dev.quarry.agent;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

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

  /**
   * One call let through. It tells the breaker once how it ended ({@link #succeeded}, {@link #failed}
   * or {@link #released}; later reports are ignored), and only the half-open trial's report ends
   * the trial: a call let through while the breaker was closed never frees or takes another's trial.
   */
  final class Permit {
    private final boolean trial;
    private boolean ended;

    private Permit(boolean trial) {
      this.trial = trial;
    }

    /** The endpoint answered: the breaker closes. */
    void succeeded() {
      synchronized (CircuitBreaker.this) {
        if (end()) {
          consecutiveFailures = 0;
        }
      }
    }

    /** The endpoint failed (unreachable, 5xx, its own timeout): one more consecutive failure. */
    void failed() {
      synchronized (CircuitBreaker.this) {
        if (end()) {
          consecutiveFailures++;
          if (consecutiveFailures >= threshold) {
            openUntil = clock.instant().plus(cooldown);
          }
        }
      }
    }

    /**
     * The call ended without telling anything about the endpoint's health: cancelled, cut by its
     * caller's own deadline, refused for the request itself. Neutral: a trial lets the next call be one.
     */
    void released() {
      synchronized (CircuitBreaker.this) {
        end();
      }
    }

    /** Whether this is the first report; ends the trial if this call was it. */
    private boolean end() {
      if (ended) {
        return false;
      }
      ended = true;
      if (trial) {
        trialInFlight = false;
      }
      return true;
    }
  }

  /** The call may go ({@code permit}), or should ask again after {@code retryIn}: exactly one is set. */
  record Admission(Permit permit, Duration retryIn) {}

  /** Lets a call through, or fails with ModelUnavailable while open (or while another call is the half-open trial). */
  synchronized Permit acquire() {
    Admission a = tryAcquire();
    if (a.permit() == null) {
      throw paused(a.retryIn());
    }
    return a.permit();
  }

  /**
   * Lets the call go when closed, or as the half-open trial; otherwise says how long to wait
   * before asking again: until the cool-down ends, or a moment while another call is the trial.
   */
  synchronized Admission tryAcquire() {
    if (consecutiveFailures < threshold) {
      return new Admission(new Permit(false), null);
    }
    Instant now = clock.instant();
    if (now.isBefore(openUntil)) {
      return new Admission(null, Duration.between(now, openUntil));
    }
    if (trialInFlight) {
      return new Admission(null, TRIAL_POLL);
    }
    trialInFlight = true;
    return new Admission(new Permit(true), null);
  }

  /** The failure of a call that cannot wait {@code wait} for the breaker. */
  synchronized ModelFailure paused(Duration wait) {
    long waitS = Math.max(1, (wait.toMillis() + 999) / 1000);
    return new ModelFailure("ModelUnavailable", "the model endpoint failed " + consecutiveFailures
        + " times in a row; calls are paused (circuit breaker open) for about " + waitS + " s more");
  }

  synchronized State state() {
    if (consecutiveFailures < threshold) {
      return State.CLOSED;
    }
    return clock.instant().isBefore(openUntil) ? State.OPEN : State.HALF_OPEN;
  }
}
