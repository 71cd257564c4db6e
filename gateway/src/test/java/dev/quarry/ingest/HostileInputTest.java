package dev.quarry.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.ingest.IngestException.Reason;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * One test per class of hostile input of issue 33: a source of at most 1 MB whose numbers ask a
 * converter for far more than its size (spans, grids, padding, gridBefore, nesting, repeated
 * references, item counts, decompression). Each is refused with a 4xx naming the limit it passed,
 * or converted, and either way the thread that converted it allocated no more than its file's
 * allocation ceiling (garbage included: 1 GiB for these), and most far less (the figures are
 * printed; what each holds at its peak is measured by {@code ./quarry bench ingest-memory}, against
 * the 256 MB). On main, each of these took the heap or ran for minutes.
 */
@DisplayName("Hostile inputs are refused, naming the limit, before what they ask for is allocated")
class HostileInputTest {
  /** The allocation ceiling of a file of {@code bytes} under the default settings. */
  static long ceiling(long bytes) {
    return Math.max(IngestBudget.FREE_ALLOCATION,
        (long) dev.quarry.config.IngestSettings.DEFAULTS.allocationPerSourceByte() * bytes);
  }

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
  private final Converters converters = new Converters(50L << 20);

  /** What converting a fixture as ingestion does (sniffed, converted, cleaned, bounded) allocated. */
  private record Outcome(IngestException refusal, long allocated) {}

  private Outcome ingest(String name) {
    HostileFixtures.Fixture f = HostileFixtures.all().get(name);
    assertThat(f.bytes().length).as(name + " bytes").isLessThanOrEqualTo(1 << 20);
    long before = THREADS.getCurrentThreadAllocatedBytes();
    IngestException refusal = null;
    try {
      converters.convertClean(converters.detect(name, null, f.bytes()), name, f.bytes());
    } catch (IngestException e) {
      refusal = e;
    }
    long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
    System.out.printf("%-16s %8d bytes: allocated %6.1f MiB, %s%n", name, f.bytes().length, allocated / 1048576.0,
        refusal == null ? "converted" : refusal.getMessage());
    // Checked every 64 charges: a charge's worth over the ceiling at most.
    assertThat(allocated).as(name + ": bytes allocated converting it")
        .isLessThanOrEqualTo(ceiling(f.bytes().length) + (64L << 20));
    return new Outcome(refusal, allocated);
  }

  /** Refused as {@code reason}, the message naming the file and containing each of {@code named}. */
  private void refused(String name, Reason reason, String... named) {
    Outcome o = ingest(name);
    assertThat(o.refusal()).as(name + " is refused").isNotNull();
    assertThat(o.refusal().reason()).as(o.refusal().getMessage()).isEqualTo(reason);
    assertThat(o.refusal().getMessage()).startsWith(name + ": ").contains(named);
  }

  @Test
  @DisplayName("HTML: a 49 KB table of colspan=1000 rowspan=65535 cells is refused at the table's cell limit")
  void htmlSpans() {
    refused("spans.html", Reason.TOO_LARGE, "1,000 rows by 1,000 columns", "the limit for one table is 100,000 cells");
  }

  @Test
  @DisplayName("docling: a grid of one wide row and 60,000 empty rows is refused as it grows, padding counted")
  void doclingGrid() {
    refused("grid.json", Reason.TOO_LARGE, "by 5,000 columns", "empty ones", "the limit for one table is");
  }

  @Test
  @DisplayName("docling: table_cells spans written over each other, and a declared 50,000 x 50,000, are refused")
  void doclingCells() {
    refused("cells.json", Reason.TOO_LARGE, "rows by 300 columns", "the limit for one table is");
    refused("declared.json", Reason.TOO_LARGE, "50,000 rows by 50,000 columns");
  }

  @Test
  @DisplayName("docling: a caption referenced by 2,000 pictures is refused at the text a document may be built of")
  void doclingCaptions() {
    refused("captions.json", Reason.TOO_LARGE, "captions", "characters");
  }

  @Test
  @DisplayName("GFM: a table with a 60,000-column header is refused before commonmark pads its rows")
  void gfmHeader() {
    refused("header.md", Reason.TOO_LARGE, "301 rows by 60,002 columns", "the limit for one table is");
  }

  @Test
  @DisplayName("DOCX: w:gridBefore of 1,500,000,000 is refused before one position is padded")
  void docxGridBefore() {
    refused("gridbefore.docx", Reason.TOO_LARGE, "1 rows by 1,500,000,000 columns", "the limit for one table is");
  }

  @Test
  @DisplayName("DOCX: rows of cells spanning 64 columns each, and vertical merges under a wide row, are refused")
  void docxSpansAndMerges() {
    refused("gridspan.docx", Reason.TOO_LARGE, "the limit for one table is");
    refused("vmerge.docx", Reason.TOO_LARGE, "by 200 columns", "the limit for one table is");
  }

  @Test
  @DisplayName("DOCX: XML inflating to millions of elements, and parts inflating to 480 MB, are refused before POI opens them")
  void docxBeforePoi() {
    refused("elements.docx", Reason.TOO_LARGE, "XML elements", "QUARRY_INGEST_FILE_MEMORY_MB");
    refused("parts.docx", Reason.TOO_LARGE, "bytes inflated", "QUARRY_INGEST_FILE_MEMORY_MB");
  }

  @Test
  @DisplayName("nesting: content controls, quotes, emphasis and HTML elements deeper than 256 levels are refused")
  void nesting() {
    refused("nested.docx", Reason.MALFORMED, "nested deeper than 256 levels");
    refused("quotes.md", Reason.MALFORMED, "nested deeper than 256 levels");
    refused("emphasis.md", Reason.MALFORMED, "nested deeper than 256 levels");
    refused("nested.html", Reason.MALFORMED, "nested deeper than 256 levels");
  }

  @Test
  @DisplayName("item counts: 333,000 paragraphs or 250,000 list items are refused at the item limit")
  void itemCounts() {
    refused("items.txt", Reason.TOO_LARGE, "items; the limit is 200000");
    refused("listitems.md", Reason.TOO_LARGE, "items; the limit is 200000");
  }

  @Test
  @DisplayName("PDF: a font or a form inflating to 600 MB is refused at the stream limit; an inline image is never decoded")
  void pdfStreams() {
    refused("font.pdf", Reason.TOO_LARGE, "decodes to more than 16 MiB", "the limit for one stream");
    refused("form.pdf", Reason.TOO_LARGE, "decodes to more than 16 MiB", "the limit for one stream");
    Outcome inline = ingest("inline.pdf");
    assertThat(inline.refusal()).as("the page's text converts; its inline image is a picture").isNull();
  }

  @Test
  @DisplayName("PDF: 2,000 pages drawing one stream of 40,000 glyphs are refused at the file's memory, counted glyph by glyph")
  void pdfGlyphs() {
    refused("glyphs.pdf", Reason.TOO_LARGE, "the PDF's glyphs", "QUARRY_INGEST_FILE_MEMORY_MB");
  }

  @Test
  @DisplayName("PDF: 200,000 distinct names leave nothing on the heap once converted (PDFBox kept them all, for good)")
  void pdfNamesDoNotStay() {
    ingest("inline.pdf"); // PDFBox's own caches (the standard fonts' metrics) fill on a first PDF
    long before = heldAfterCollection();
    Outcome o = ingest("names.pdf");
    assertThat(o.refusal()).as("its text converts").isNull();
    long kept = heldAfterCollection() - before;
    System.out.printf("names.pdf: %.1f MiB still held after its conversion%n", kept / 1048576.0);
    // Each name held would be about 150 bytes: 200,000 of them 29 MiB.
    assertThat(kept).as("bytes still held after the conversion").isLessThan(8L << 20);
  }

  private static long heldAfterCollection() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    Runtime r = Runtime.getRuntime();
    return r.totalMemory() - r.freeMemory();
  }

  @Test
  @DisplayName("a paragraph of a million characters of '<a ' converts as its text: no '<' is looked past 2,048"
      + " characters for its '>' (quadratic before: hours for 1 MB)")
  @org.junit.jupiter.api.Timeout(value = 120, unit = java.util.concurrent.TimeUnit.SECONDS) // a guard against the hang, not a speed target
  void angles() throws Exception {
    Outcome o = ingest("angles.md");
    assertThat(o.refusal()).as("angles.md converts").isNull();
    ConvertedDocument doc = converters.convertClean(SourceType.MARKDOWN, "angles.md",
        HostileFixtures.all().get("angles.md").bytes()).document();
    String text = doc.items().stream().map(dev.quarry.store.DocItem::text).collect(java.util.stream.Collectors.joining());
    assertThat(text.replace(" ", "")).as("every '<a' kept as text").hasSize(2 * 349_000).matches("(<a)+");
  }

  @Test
  @DisplayName("a '<' with its '>' near is still an autolink or inline HTML; one whose '>' is past 2,048 characters is text")
  void anglesNearAndFar() throws Exception {
    String near = "See <https://quarry.example/docs> and <b>bold</b> here.\n";
    ConvertedDocument a = converters.convertClean(SourceType.MARKDOWN, "near.md", near.getBytes(java.nio.charset.StandardCharsets.UTF_8)).document();
    String far = "Look <" + "x".repeat(MarkdownAngles.LOOKAHEAD + 10) + "> there.\n";
    ConvertedDocument b = converters.convertClean(SourceType.MARKDOWN, "far.md", far.getBytes(java.nio.charset.StandardCharsets.UTF_8)).document();
    assertThat(a.items().get(0).text()).contains("https://quarry.example/docs").contains("bold");
    assertThat(b.items().get(0).text()).startsWith("Look <xxx").endsWith("> there.");
  }

  @Test
  @DisplayName("a refusal a library swallows still refuses the file: the budget remembers it")
  void swallowedRefusal() {
    IngestBudget budget = IngestBudget.of("swallowed.txt", 10);
    try {
      budget.nesting(IngestBudget.MAX_NESTING + 1, "a test");
    } catch (IngestBudget.Exceeded e) {
      // what PDFBox does with an error loading a font: logs it and goes on
    }
    Converter ok = (name, bytes, b) -> {
      try {
        b.nesting(IngestBudget.MAX_NESTING + 1, "inside a library");
      } catch (IngestBudget.Exceeded e) {
        // swallowed
      }
      return new ConvertedDocument("t", SourceType.TEXT, java.util.List.of(
          new dev.quarry.store.DocItem(0, "#/texts/0", "text", "fine", java.util.List.of(), 0, 0)));
    };
    java.util.Map<SourceType, Converter> all = new java.util.EnumMap<>(SourceType.class);
    for (SourceType t : SourceType.values()) {
      all.put(t, ok);
    }
    assertThat(budget.tripped()).isNotNull();
    assertThatThrownBy(() -> new Converters(1024, all).convertClean(SourceType.TEXT, "swallowed.txt", "x".getBytes()))
        .isInstanceOfSatisfying(IngestException.class, e -> assertThat(e.reason()).isEqualTo(Reason.MALFORMED))
        .hasMessageContaining("inside a library");
  }
}
