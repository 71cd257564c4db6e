package dev.quarry.ingest;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/** Wall time spent per ingest stage, summed over every ingest of one {@link IngestService}. */
public final class StageTimes {
  /** The stages in pipeline order; the transaction's time includes its inserts. */
  public enum Stage { CONVERT, TOC, CHUNK, EMBED, ENCODE_ROWS, INSERT_ITEMS, INSERT_CHUNKS, TRANSACTION, SYNC }

  private final Map<Stage, LongAdder> nanos = new EnumMap<>(Stage.class);

  StageTimes() {
    for (Stage s : Stage.values()) {
      nanos.put(s, new LongAdder());
    }
  }

  void add(Stage stage, long elapsedNanos) {
    nanos.get(stage).add(elapsedNanos);
  }

  /** Milliseconds per stage so far. */
  public Map<Stage, Double> millis() {
    Map<Stage, Double> out = new EnumMap<>(Stage.class);
    nanos.forEach((s, n) -> out.put(s, n.sum() / 1e6));
    return out;
  }
}
