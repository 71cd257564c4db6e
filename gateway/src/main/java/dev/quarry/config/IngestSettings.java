package dev.quarry.config;

/**
 * How much memory ingestion may take: each file's share, all ingests' together, and the ceiling on
 * what the thread converting a file may allocate.
 *
 * @param fileMemoryBytes {@code QUARRY_INGEST_FILE_MEMORY_MB}: the most one file's ingest may hold
 *     (a smaller file gets less, see {@code IngestBudget}); past it the file is refused
 * @param memoryBytes {@code QUARRY_INGEST_MEMORY_MB}: what all ingests under way may hold together;
 *     an ingest whose share does not fit waits until it does
 * @param allocationPerSourceByte {@code QUARRY_INGEST_ALLOCATION_PER_BYTE}: how many bytes the
 *     converting thread may allocate (garbage included) per byte of the source, past a floor
 */
public record IngestSettings(long fileMemoryBytes, long memoryBytes, int allocationPerSourceByte) {
  private static final long MIB = 1024L * 1024;

  /** The defaults, for code that converts outside a gateway (tests, the CLI, benchmarks). */
  public static final IngestSettings DEFAULTS = new IngestSettings(512 * MIB, 768 * MIB, 4096);

  public IngestSettings {
    if (fileMemoryBytes < 1 || memoryBytes < 1 || allocationPerSourceByte < 1) {
      throw new IllegalArgumentException("ingest memory settings must be positive");
    }
  }

  static IngestSettings read(Settings s) {
    int file = s.integer("QUARRY_INGEST_FILE_MEMORY_MB", (int) (DEFAULTS.fileMemoryBytes / MIB), 16, 65_536);
    int all = s.integer("QUARRY_INGEST_MEMORY_MB", (int) (DEFAULTS.memoryBytes / MIB), 16, 1_048_576);
    int allocation = s.integer("QUARRY_INGEST_ALLOCATION_PER_BYTE", DEFAULTS.allocationPerSourceByte, 64, 1_048_576);
    return new IngestSettings(file * MIB, all * MIB, allocation);
  }
}
