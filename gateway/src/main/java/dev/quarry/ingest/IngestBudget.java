package dev.quarry.ingest;

import dev.quarry.config.IngestSettings;
import dev.quarry.ingest.IngestException.Reason;
import java.lang.management.ManagementFactory;
import java.util.Locale;

/**
 * What converting one source may build, charged as the conversion builds it and checked before the
 * structure grows: the cells of its tables (padding included: a row as wide as the widest, the slots
 * a span covers), its text, its items, what the parsers make of it (a DOM, an XML tree, a PDF's
 * glyphs), and the bytes the converting thread allocates. Past a limit the conversion stops with a
 * refusal naming the limit and the file ({@link Exceeded}, a {@code 413}), so a small hostile source
 * cannot take the heap that searches and other tenants' ingests need.
 *
 * <p>The limits grow with the source, the way {@link ItemBounds#maxChars} does: what a real file
 * needs is proportional to its size, what a hostile one asks for is not (a 49 KB table of {@code
 * colspan=1000 rowspan=65535} cells asked for billions of slots). One budget belongs to one
 * conversion and to the thread that runs it; it is not shared.
 */
public final class IngestBudget {
  private static final long MIB = 1024L * 1024;

  /** Cells any table may have, whatever the size of its source. */
  public static final long FREE_TABLE_CELLS = 100_000;
  /** Cells a table may have per byte of its source, past {@link #FREE_TABLE_CELLS}. */
  public static final int TABLE_CELLS_PER_SOURCE_BYTE = 1;
  /** The most cells one table may have: 1,000 columns by 2,000 rows, or 20 by 100,000. */
  public static final long MAX_TABLE_CELLS = 2_000_000;
  /** The most cells all of a document's tables may have together. */
  public static final long MAX_DOCUMENT_CELLS = 2 * MAX_TABLE_CELLS;

  /** Memory any file may take, whatever its size (within the file limit of the settings). */
  public static final long FREE_MEMORY = 32 * MIB;
  /**
   * Memory a file may take per byte of itself, past {@link #FREE_MEMORY}: a file of 1 MiB may take
   * 256 MiB in all. Parsers' trees count at most about 120 bytes a byte of source (below), a real
   * PDF about 35 (the filings' glyphs), the text a document may become 20 characters a byte.
   */
  public static final int MEMORY_PER_SOURCE_BYTE = 224;
  /** Bytes any conversion may allocate, garbage included, whatever the size of its source. */
  public static final long FREE_ALLOCATION = 1024 * MIB;

  /**
   * The deepest nesting a converter follows (lists in lists, quotes in quotes, content controls in
   * content controls): deeper than any real document, and the walk recurses once a level.
   */
  public static final int MAX_NESTING = 256;

  /**
   * Characters of text a conversion may build per character its document may hold: items count
   * once as built and once as items, and some are dropped or cut after (TextHygiene, ItemBounds'
   * pieces, which keeps the exact limit on what is stored).
   */
  static final int TEXT_BUILT_PER_CHAR = 4;

  /** What a cell of a table grid costs while it is built: its slot and its share of the row. */
  static final int CELL_BYTES = 16;
  /** What an item costs besides its text: the record, its reference and label, its page list. */
  static final int ITEM_BYTES = 160;

  private static final com.sun.management.ThreadMXBean THREADS = threads();
  /** Allocation is read every this many charges: a read costs tens of nanoseconds. */
  private static final int CHECK_EVERY = 64;

  private final String fileName;
  private final long sourceBytes;
  private final long memoryLimit;
  private final long fileMemoryLimit;
  private final long allocationLimit;
  private final long tableCellLimit;
  private final long documentCellLimit;
  private final long charLimit;
  private final Thread thread;
  private final long allocatedAtStart;

  private long memory;
  /** The first refusal this budget made: a library that catches it and goes on does not undo it. */
  private IngestException tripped;
  private long cells;
  private long chars;
  private long items;
  private int charges;

  private IngestBudget(String fileName, long sourceBytes, IngestSettings settings) {
    this.fileName = fileName;
    this.sourceBytes = sourceBytes;
    this.fileMemoryLimit = settings.fileMemoryBytes();
    this.memoryLimit = memoryFor(sourceBytes, settings);
    this.allocationLimit = Math.max(FREE_ALLOCATION, saturatedTimes(settings.allocationPerSourceByte(), sourceBytes));
    this.tableCellLimit = Math.min(MAX_TABLE_CELLS, Math.max(FREE_TABLE_CELLS,
        saturatedTimes(TABLE_CELLS_PER_SOURCE_BYTE, sourceBytes)));
    this.documentCellLimit = Math.min(MAX_DOCUMENT_CELLS, 2 * tableCellLimit);
    this.charLimit = TEXT_BUILT_PER_CHAR * ItemBounds.maxChars(sourceBytes);
    this.thread = Thread.currentThread();
    this.allocatedAtStart = allocatedNow();
  }

  /** A budget for converting {@code sourceBytes} bytes named {@code fileName}, on this thread. */
  public static IngestBudget of(String fileName, long sourceBytes, IngestSettings settings) {
    return new IngestBudget(fileName, sourceBytes, settings);
  }

  /** A budget with the default settings ({@link IngestSettings#DEFAULTS}). */
  public static IngestBudget of(String fileName, long sourceBytes) {
    return of(fileName, sourceBytes, IngestSettings.DEFAULTS);
  }

  /**
   * The memory a file of {@code sourceBytes} may take: {@link #FREE_MEMORY} plus {@link
   * #MEMORY_PER_SOURCE_BYTE} a byte, at most the settings' file limit. It is also what its ingest
   * reserves of the gateway's ingest memory before it starts.
   */
  public static long memoryFor(long sourceBytes, IngestSettings settings) {
    return Math.min(settings.fileMemoryBytes(),
        FREE_MEMORY + saturatedTimes(MEMORY_PER_SOURCE_BYTE, sourceBytes));
  }

  public String fileName() {
    return fileName;
  }

  public long sourceBytes() {
    return sourceBytes;
  }

  /**
   * The first refusal this budget made, or null. A parser that catches what it calls into (PDFBox
   * skips a font it cannot load) may swallow the refusal and go on; the conversion is refused at
   * its end all the same.
   */
  public IngestException tripped() {
    return tripped;
  }

  /** Records {@code refusal} as this budget's (the first one stays). */
  Exceeded trip(IngestException refusal) {
    if (tripped == null) {
      tripped = refusal;
    }
    return new Exceeded(refusal);
  }

  /** The most cells one table of this source may have, padding included. */
  long tableCellLimit() {
    return tableCellLimit;
  }

  /** Memory counted so far, in bytes. */
  public long memory() {
    return memory;
  }

  /** Bytes the converting thread allocated since the budget was made (-1 when unknown). */
  public long allocated() {
    long now = allocatedNow();
    return now < 0 || allocatedAtStart < 0 ? -1 : now - allocatedAtStart;
  }

  /**
   * From now on counts only {@code bytes} as held: what a finished conversion leaves (its items),
   * once the parsers' trees and the grids it was built from are garbage.
   */
  public void held(long bytes) {
    memory = bytes;
  }

  /**
   * Counts {@code bytes} of memory the conversion holds for {@code what} (a parser's tree, a page's
   * glyphs), before it is allocated where the caller can.
   */
  public void memory(long bytes, String what) {
    memory += bytes;
    if (memory > memoryLimit) {
      throw exceeded("converting it needs more than " + mib(memoryLimit) + " of memory (counted at "
          + what + "); the limit for a file of " + count(sourceBytes) + " bytes is " + mib(memoryLimit)
          + " (" + mib(FREE_MEMORY) + " and " + MEMORY_PER_SOURCE_BYTE + " bytes a byte of source, at most "
          + mib(fileMemoryLimit) + ", QUARRY_INGEST_FILE_MEMORY_MB)");
    }
    tick();
  }

  /**
   * Counts {@code n} characters of text the conversion builds for {@code what}: items' text, and
   * text built on the way to an item (a table's Markdown before it is one, captions joined).
   */
  void text(long n, String what) {
    chars += n;
    if (chars > charLimit) {
      throw exceeded(what + " take it past " + count(charLimit) + " characters of text built (items and what"
          + " they are built from); the limit is " + count(ItemBounds.maxChars(sourceBytes)) + " characters"
          + " for a source of " + count(sourceBytes) + " bytes, " + TEXT_BUILT_PER_CHAR + " times that built");
    }
    memory(2 * n, what);
  }

  /** Counts one item and its text. */
  void item(String text) {
    items++;
    if (items > 2L * ItemBounds.MAX_ITEMS) {
      throw exceeded("converts to more than " + count(2L * ItemBounds.MAX_ITEMS) + " items; the limit is "
          + count(ItemBounds.MAX_ITEMS) + " for one document");
    }
    memory(ITEM_BYTES, "items");
    text(text.length(), "its items");
  }

  /**
   * Counts {@code n} cells a table grid is growing by; the grid has already checked its own size
   * against {@link #tableCellLimit()}.
   */
  void cells(long n) {
    cells += n;
    if (cells > documentCellLimit) {
      throw exceeded("its tables have more than " + count(documentCellLimit) + " cells in all (empty ones "
          + "included); the limit is " + count(documentCellLimit) + " for a source of " + count(sourceBytes)
          + " bytes (twice what one table may have)");
    }
    memory(CELL_BYTES * n, "table cells");
  }

  /** A table whose padded size would pass the per-table limit: refused before it grows. */
  Exceeded tableTooLarge(long rows, long columns) {
    return exceeded("has a table of " + count(rows) + " rows by " + count(columns) + " columns ("
        + count(saturatedTimes(rows, columns)) + " cells, empty ones and those a span repeats included);"
        + " the limit for one table is " + count(tableCellLimit) + " cells for a source of " + count(sourceBytes)
        + " bytes (" + count(FREE_TABLE_CELLS) + ", or " + TABLE_CELLS_PER_SOURCE_BYTE + " a byte of source when"
        + " that is more, at most " + count(MAX_TABLE_CELLS) + ")");
  }

  /** Refuses nesting deeper than {@link #MAX_NESTING} levels at {@code what}. */
  void nesting(int depth, String what) {
    if (depth > MAX_NESTING) {
      throw trip(new IngestException(Reason.MALFORMED, fileName, "is nested deeper than "
          + MAX_NESTING + " levels (" + what + ")"));
    }
  }

  /** Checks the allocation ceiling now (long loops call it where they charge nothing). */
  void tick() {
    if (++charges % CHECK_EVERY == 0) {
      checkAllocation();
    }
  }

  void checkAllocation() {
    if (Thread.currentThread() != thread) {
      return;
    }
    long allocated = allocated();
    if (allocated > allocationLimit) {
      throw exceeded("converting it allocated more than " + mib(allocationLimit) + " (garbage included);"
          + " the limit for a source of " + count(sourceBytes) + " bytes is " + mib(allocationLimit)
          + " (QUARRY_INGEST_ALLOCATION_PER_BYTE times its size, at least " + mib(FREE_ALLOCATION) + ")");
    }
  }

  private Exceeded exceeded(String detail) {
    return trip(new IngestException(Reason.TOO_LARGE, fileName, detail));
  }

  private long allocatedNow() {
    return THREADS == null ? -1 : THREADS.getCurrentThreadAllocatedBytes();
  }

  private static com.sun.management.ThreadMXBean threads() {
    if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean t
        && t.isThreadAllocatedMemorySupported()) {
      if (!t.isThreadAllocatedMemoryEnabled()) {
        t.setThreadAllocatedMemoryEnabled(true);
      }
      return t;
    }
    return null;
  }

  static long saturatedTimes(long a, long b) {
    long high = Math.multiplyHigh(a, b);
    long low = a * b;
    return (high == 0 && low >= 0) ? low : Long.MAX_VALUE;
  }

  private static String count(long n) {
    return String.format(Locale.ROOT, "%,d", n);
  }

  private static String mib(long bytes) {
    return String.format(Locale.ROOT, "%,d MiB", bytes / MIB);
  }

  /**
   * A limit of the budget reached. Unchecked, so that a parser's callback (a PDF page's glyphs, a
   * JSON tree's nodes) can stop the conversion; {@link Converters} turns it into its refusal.
   */
  public static final class Exceeded extends RuntimeException {
    private final IngestException refusal;

    Exceeded(IngestException refusal) {
      super(refusal.getMessage(), null, false, false);
      this.refusal = refusal;
    }

    public IngestException refusal() {
      return refusal;
    }
  }
}
