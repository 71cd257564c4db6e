package dev.quarry.agent;

import io.vertx.core.json.JsonObject;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An analysis' loop run again from records: the records of the analyses it follows up (oldest
 * first) and, when it is taken over, its own. While a record lasts, the loop takes the model's turns
 * from it instead of asking again, and runs the cells it ended again with their callbacks answered
 * from it, checking each against its recorded result; past the record the loop goes on live. At the
 * end of a followed-up analysis' record (its recorded answer) the loop goes on to the next question.
 *
 * <p>A rebuilt state is trusted only if each rebuilt cell gives its recorded result (its duration
 * aside), makes exactly the recorded callbacks, and runs the recorded code; otherwise the analysis
 * ends {@code failed} with {@value #DIVERGED}, naming the cell.
 */
final class Rebuild {
  static final String DIVERGED = "RebuildDiverged";

  /** What the loop does with a cell. */
  enum Cell {
    /** Ended in the record: run again from the record, checked, nothing emitted or stored. */
    REBUILD,
    /** Started in the record and cut short (its replica died): run again, its output sent beyond what was. */
    RESUME,
    /** Not in the record: run live. */
    LIVE
  }

  private final List<AnalysisRecord> segments;
  /** The analysis' own record when it is taken over; null for a follow-up starting now. */
  private final AnalysisRecord own;
  private int at;

  Rebuild(List<AnalysisRecord> followed, AnalysisRecord own) {
    this.own = own;
    List<AnalysisRecord> all = new java.util.ArrayList<>(followed);
    if (own != null) {
      all.add(own);
    }
    this.segments = List.copyOf(all);
  }

  /** The record the loop reads now; null once it runs live past every record. */
  AnalysisRecord current() {
    return at < segments.size() ? segments.get(at) : null;
  }

  /** Whether the loop is in the record of an analysis it follows up (not its own question yet). */
  boolean inFollowed() {
    return at < segments.size() && segments.get(at) != own;
  }

  AnalysisRecord own() {
    return own;
  }

  /** The first record (the first question's): its system-side words start the conversation. */
  AnalysisRecord first() {
    return segments.isEmpty() ? null : segments.get(0);
  }

  /** The analysis whose question this one follows up: the last record that is not its own; null if none. */
  java.util.UUID followedId() {
    java.util.UUID out = null;
    for (AnalysisRecord r : segments) {
      if (r != own) {
        out = r.id();
      }
    }
    return out;
  }

  /** Goes on past a followed-up analysis' answer; the record now read (null: the new question, live). */
  AnalysisRecord next() {
    at++;
    return current();
  }

  /** The recorded turn {@code turn} (0-based) of the current record, or null: ask the model. */
  ModelTurn turn(int turn) {
    AnalysisRecord r = current();
    return r != null && turn < r.turns().size() ? r.turns().get(turn) : null;
  }

  /** What to do with cell {@code step} of the current analysis. */
  Cell cell(int step) {
    AnalysisRecord r = current();
    if (r == null) {
      return Cell.LIVE;
    }
    if (r.results().containsKey(step)) {
      return Cell.REBUILD;
    }
    return r.codes().containsKey(step) ? Cell.RESUME : Cell.LIVE;
  }

  /**
   * Why a rebuilt cell's result is not its recorded one, or null when it is: the same success,
   * output, error and truncation (the duration is the run's own). Compared as stored (NUL shown as
   * U+2400).
   */
  static String difference(JsonObject rebuilt, JsonObject recorded) {
    JsonObject a = comparable(rebuilt);
    JsonObject b = comparable(recorded);
    for (String field : List.of("success", "stdout", "stderr", "error", "truncated")) {
      Object x = a.getValue(field);
      Object y = b.getValue(field);
      if (x == null ? y != null : !x.equals(y)) {
        return "its " + field + " differs from the recorded one";
      }
    }
    return null;
  }

  private static JsonObject comparable(JsonObject result) {
    JsonObject copy = result.copy();
    copy.remove("duration_ms");
    return (JsonObject) AnalysisStore.withoutNul(copy);
  }

  /**
   * Drops from a resumed cell's output what its record shows sent already: per channel, as many
   * characters (code points) as were stored; the rest of each piece goes out.
   */
  static final class SentOutput {
    private final Map<String, Long> left;
    private int callbacksLeft;

    SentOutput(AnalysisRecord.Sent sent) {
      this.left = new HashMap<>(sent.outputChars());
      this.callbacksLeft = sent.callbackEvents();
    }

    /** The part of {@code text} not sent yet on {@code channel} (empty when all of it was). */
    synchronized String unsent(String channel, String text) {
      long skip = left.getOrDefault(channel, 0L);
      if (skip <= 0) {
        return text;
      }
      int points = text.codePointCount(0, text.length());
      if (points <= skip) {
        left.put(channel, skip - points);
        return "";
      }
      left.put(channel, 0L);
      return text.substring(text.offsetByCodePoints(0, (int) skip));
    }

    /** Whether this callback's event was sent already. */
    synchronized boolean callbackSent() {
      if (callbacksLeft > 0) {
        callbacksLeft--;
        return true;
      }
      return false;
    }
  }
}
