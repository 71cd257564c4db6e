package dev.quarry.agent;

import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Who, on this replica, follows an analysis through its stored events, and the wake-ups that tell
 * them to read again: each write of an analysis' events announces {@code "<analysis id> <last
 * seq>"} on {@link #CHANNEL} in its own transaction (so when it is visible), and every replica hears
 * it (store.Notifications). A wake-up only says "read now": the events themselves are read from
 * {@code analysis_events} by seq, so a notification lost, doubled or late costs a delay, never an
 * event. After the listening connection comes back every follower is woken, since some may have
 * been missed; followers also read on a timer of their own.
 */
public final class EventWakeups {
  /** The channel on which writes of analysis events are announced. */
  public static final String CHANNEL = "quarry_analysis_events";

  /** A follower's wake-up: told the last seq the write stored (or -1: unknown, read anyway). */
  @FunctionalInterface
  public interface Wake {
    void wake(long lastSeq);
  }

  private final Map<UUID, Set<Wake>> following = new ConcurrentHashMap<>();

  /** The payload announcing that events up to {@code lastSeq} of the analysis are stored. */
  static String payload(UUID analysis, long lastSeq) {
    return analysis + " " + lastSeq;
  }

  /** Wakes {@code wake} on each write of the analysis' events until the returned action runs. */
  public Runnable register(UUID analysis, Wake wake) {
    following.computeIfAbsent(analysis, k -> ConcurrentHashMap.newKeySet()).add(wake);
    return () -> following.computeIfPresent(analysis, (k, set) -> {
      set.remove(wake);
      return set.isEmpty() ? null : set;
    });
  }

  /** Acts on a notification of {@link #CHANNEL}; a payload it cannot read is ignored (a newer replica's). */
  public void notified(String payload) {
    if (payload == null || following.isEmpty()) {
      return;
    }
    int space = payload.indexOf(' ');
    if (space < 0) {
      return;
    }
    UUID analysis;
    long lastSeq;
    try {
      analysis = UUID.fromString(payload.substring(0, space));
      lastSeq = Long.parseLong(payload.substring(space + 1));
    } catch (IllegalArgumentException e) {
      return;
    }
    Set<Wake> wakes = following.get(analysis);
    if (wakes != null) {
      wakes.forEach(w -> w.wake(lastSeq));
    }
  }

  /** Wakes every follower: the listening connection was (re)subscribed, and notifications may have been missed. */
  public void wakeAll() {
    following.values().forEach(set -> set.forEach(w -> w.wake(-1)));
  }

  /** How many followers wait on this replica now (for tests and metrics). */
  public int followers() {
    return following.values().stream().mapToInt(Set::size).sum();
  }
}
