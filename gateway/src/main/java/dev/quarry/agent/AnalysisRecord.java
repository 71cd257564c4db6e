package dev.quarry.agent;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What an analysis' record holds that a rebuild needs (loaded by {@link AnalysisRecords}): the
 * question as it was asked, the model's turns, each cell's code, its result when it ended and its
 * callbacks' answers, how much of its output was sent already, and where its events stand. The
 * rebuild gives the model its recorded turns instead of asking again, runs the recorded cells again
 * with their callbacks answered from here, and checks that each gives its recorded result.
 *
 * @param started    its {@code started} event: question, document_ids, budgets, conversation, instructions
 * @param preload    its preloaded documents
 * @param follows    the analysis whose question it follows up (null for a first question)
 * @param lastSeq    the seq of its last stored event
 * @param storedChars the characters of its stored events (its caps count them)
 * @param lastAt     when its last stored event happened
 * @param deadlineAt when its wall time runs out, as stored
 * @param terminal   whether its stored events end it (an answer or a failure)
 * @param cancelRequested whether a cancel was asked while no replica held it
 */
record AnalysisRecord(UUID id, UUID tenantId, JsonObject started, List<UUID> preload, UUID follows, int moves,
    List<ModelTurn> turns, Map<Integer, String> codes, Map<Integer, JsonObject> results,
    Map<Integer, List<CallbackRecord>> callbacks, Map<Integer, Sent> sent, long lastSeq, long storedChars, Instant lastAt,
    Instant deadlineAt, boolean terminal, boolean cancelRequested) {

  /** How much of a cell's events were stored: the characters of output per channel, and its callback events. */
  record Sent(Map<String, Long> outputChars, int callbackEvents) {
    static final Sent NONE = new Sent(Map.of(), 0);
  }

  AnalysisRecord {
    turns = List.copyOf(turns);
    codes = Map.copyOf(codes);
    results = Map.copyOf(results);
    callbacks = Map.copyOf(callbacks);
    sent = Map.copyOf(sent);
    preload = List.copyOf(preload);
  }

  /**
   * What is left of its wall time when it goes on: what was left at its last stored event (the time
   * nobody ran it does not count), never less than nothing; {@code whole} when nothing ran yet (its
   * replica died before its first event was stored).
   */
  java.time.Duration wallTimeLeft(java.time.Duration whole) {
    if (deadlineAt == null || lastAt == null) {
      return whole;
    }
    java.time.Duration left = java.time.Duration.between(lastAt, deadlineAt);
    return left.isNegative() ? java.time.Duration.ZERO : left;
  }

  String question() {
    return started.getString("question", "");
  }

  List<CallbackRecord> callbacksOf(int step) {
    return callbacks.getOrDefault(step, List.of());
  }

  Sent sentOf(int step) {
    return sent.getOrDefault(step, Sent.NONE);
  }

  /** The number of cells that ended in the record. */
  int finishedCells() {
    return results.size();
  }

  /** Groups callback rows by step. */
  static Map<Integer, List<CallbackRecord>> byStep(List<CallbackRecord> rows) {
    Map<Integer, List<CallbackRecord>> out = new HashMap<>();
    rows.forEach(r -> out.computeIfAbsent(r.step(), s -> new ArrayList<>()).add(r));
    return out;
  }
}
