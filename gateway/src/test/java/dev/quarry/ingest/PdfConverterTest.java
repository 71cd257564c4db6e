package dev.quarry.ingest;

import dev.quarry.config.IngestSettings;
import dev.quarry.store.DocItem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.support.SharedData;
import java.io.ByteArrayOutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.apache.pdfbox.Loader;
import org.apache.pdfbox.cos.COSName;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.PDPage;
import org.apache.pdfbox.pdmodel.PDResources;
import org.apache.pdfbox.pdmodel.common.PDStream;
import org.apache.pdfbox.pdmodel.font.PDType1Font;
import org.apache.pdfbox.pdmodel.font.Standard14Fonts;
import org.apache.pdfbox.pdmodel.encryption.AccessPermission;
import org.apache.pdfbox.pdmodel.encryption.StandardProtectionPolicy;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class PdfConverterTest {
  private final PdfConverter converter = new PdfConverter();

  private static Path pdf(String name) {
    return SharedData.path("docling/pdf/" + name + ".pdf");
  }

  private ConvertedDocument convert(String name) throws Exception {
    return converter.convert(name + ".pdf", Files.readAllBytes(pdf(name)));
  }

  /** docling's reference for a PDF sits beside it as {@code name.json}. */
  private static ConversionReport report(String name, List<DocItem> actual) throws Exception {
    Path json = SharedData.path("docling/pdf/" + name + ".json");
    List<DocItem> reference = new DoclingJsonConverter()
        .convert(json.getFileName().toString(), Files.readAllBytes(json)).items();
    ConversionReport report = ConversionReport.compare(name + ".pdf", actual, reference);
    System.out.println(report.summary());
    return report;
  }

  /**
   * A PDF "billion laughs": Form XObjects each drawing the next one {@code fanout} times, {@code
   * levels} deep, the last showing a line of text; a couple of kilobytes that draw fanout^levels lines.
   */
  static byte[] formFanout(int levels, int fanout) {
    java.util.TreeMap<Integer, String> objs = new java.util.TreeMap<>();
    objs.put(1, "<< /Type /Catalog /Pages 2 0 R >>");
    objs.put(2, "<< /Type /Pages /Kids [3 0 R] /Count 1 >>");
    objs.put(3, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 5 0 R "
        + "/Resources << /Font << /F1 4 0 R >> /XObject << /X 6 0 R >> >> >>");
    objs.put(4, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
    objs.put(5, "<< /Length 6 >>\nstream\n/X Do\n\nendstream");
    for (int level = 0; level <= levels; level++) {
      int n = 6 + level;
      String body = level < levels ? "/X Do\n".repeat(fanout)
          : "BT /F1 10 Tf 72 700 Td (Quarry form fanout line) Tj ET\n";
      String resources = level < levels ? "<< /XObject << /X " + (n + 1) + " 0 R >> >>"
          : "<< /Font << /F1 4 0 R >> >>";
      objs.put(n, "<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources " + resources
          + " /Length " + body.length() + " >>\nstream\n" + body + "\nendstream");
    }
    StringBuilder out = new StringBuilder("%PDF-1.4\n");
    java.util.Map<Integer, Integer> offsets = new java.util.HashMap<>();
    objs.forEach((n, body) -> {
      offsets.put(n, out.length());
      out.append(n).append(" 0 obj\n").append(body).append("\nendobj\n");
    });
    int xref = out.length();
    int size = objs.lastKey() + 1;
    out.append("xref\n0 ").append(size).append("\n0000000000 65535 f \n");
    for (int n = 1; n < size; n++) {
      out.append(String.format("%010d 00000 n \n", offsets.get(n)));
    }
    out.append("trailer\n<< /Size ").append(size).append(" /Root 1 0 R >>\nstartxref\n").append(xref).append("\n%%EOF\n");
    return out.toString().getBytes(StandardCharsets.ISO_8859_1);
  }

  @Test
  @DisplayName("a page of forms that draw each other a hundred million times is refused within the page: by the deadline, checked as it runs, and by the operator cap")
  void formFanoutIsBounded() throws Exception {
    byte[] pdf = formFanout(8, 10);
    assertThat(pdf.length).isLessThan(4_000);
    long started = System.nanoTime();
    // The deadline is checked inside the page, not only between pages: one already past stops the
    // page's reading a few thousand operators in.
    try (PDDocument doc = Loader.loadPDF(pdf)) {
      assertThatThrownBy(() -> PdfPageReader.read(doc, 0, System.currentTimeMillis() - 1))
          .isInstanceOf(PdfPageReader.PageTooComplex.class)
          .hasMessageContaining("deadline");
    }
    // With the default deadline (120 s) far off, the allocation ceiling stops it first: PDFBox
    // allocates about a kilobyte for each form it draws, and a 2.5 KB source may allocate 1 GiB.
    assertThatThrownBy(() -> converter.convert("fanout.pdf", pdf))
        .isInstanceOfSatisfying(IngestException.class,
            e -> assertThat(e.reason()).isEqualTo(IngestException.Reason.TOO_LARGE))
        .hasMessageStartingWith("fanout.pdf: converting it allocated more than 1,024 MiB");
    // Allowed to allocate without a ceiling, the operator cap stops it.
    IngestSettings noCeiling = new IngestSettings(IngestSettings.DEFAULTS.fileMemoryBytes(),
        IngestSettings.DEFAULTS.memoryBytes(), Integer.MAX_VALUE);
    assertThatThrownBy(() -> {
      try {
        converter.convert("fanout.pdf", pdf, IngestBudget.of("fanout.pdf", pdf.length, noCeiling));
      } catch (IngestBudget.Exceeded e) {
        throw e.refusal();
      }
    })
        .isInstanceOfSatisfying(IngestException.class,
            e -> assertThat(e.reason()).isEqualTo(IngestException.Reason.TOO_LARGE))
        .hasMessageStartingWith("fanout.pdf: page 1 of 1 ")
        .hasMessageContaining("more than 1000000 drawing operators");
    assertThat((System.nanoTime() - started) / 1_000_000_000).as("seconds").isLessThan(100);
    // Forms within forms, each drawn once, are an ordinary page: its line is read.
    assertThat(new PdfConverter().convert("small.pdf", formFanout(2, 1)).items())
        .extracting(DocItem::text).anyMatch(t -> t.contains("Quarry form fanout line"));
  }

  @Test
  @DisplayName("a PDF with neither a title on its first page nor one in its metadata is titled by its"
      + " first heading, as docling's document for it is")
  void titleFromFirstHeading() throws Exception {
    Path json = SharedData.path("docling/pdf/2305.03393v1-pg9.json");
    String docling = new DoclingJsonConverter().convert(json.getFileName().toString(), Files.readAllBytes(json)).title();
    assertThat(convert("2305.03393v1-pg9").title()).isEqualTo("5.1 Hyper Parameter Optimization").isEqualTo(docling);
    // Nothing to go by at all: the file name.
    try (PdfFixture pdf = new PdfFixture().page()) {
      pdf.lines(72, 100, PdfFixture.REGULAR, 11, 14, "Plain text, no heading anywhere.");
      assertThat(converter.convert("notes.pdf", pdf.bytes()).title()).isEqualTo("notes.pdf");
    }
  }

  @Test
  @DisplayName("2305.03393v1-pg9.pdf: headers, paragraphs, the merged-cell table and its caption")
  void paperPage() throws Exception {
    ConvertedDocument doc = convert("2305.03393v1-pg9");
    ConversionReport r = report("2305.03393v1-pg9", doc.items());
    assertThat(r.tokenRecall()).isGreaterThanOrEqualTo(0.99);
    assertThat(r.tokenPrecision()).isGreaterThanOrEqualTo(0.99);
    assertThat(r.alignment()).isGreaterThanOrEqualTo(0.95);
    assertThat(r.labelAgreement()).isGreaterThanOrEqualTo(0.95);
    assertThat(r.pageAgreement()).isEqualTo(1.0);
    assertThat(r.tablesAgree()).isTrue();
    assertThat(doc.items()).filteredOn(i -> i.label().equals("page_header"))
        .extracting(DocItem::text)
        .containsExactly("Optimized Table Tokenization for Table Structure Recognition", "9");
    assertThat(doc.items()).filteredOn(i -> i.label().equals("section_header"))
        .extracting(DocItem::text)
        .containsExactly("5.1 Hyper Parameter Optimization", "5.2 Quantitative Results");
    DocItem table = doc.items().stream().filter(i -> i.label().equals("table")).findFirst()
        .orElseThrow();
    // TEDs spans three columns and "# enc-layers" two rows: both repeat, as docling renders them.
    assertThat(table.text()).startsWith("| # enc-layers | # dec-layers | Language | TEDs | TEDs"
        + " | TEDs | mAP (0.75) | Inference time (secs) |");
    assertThat(table.text()).contains("| # enc-layers | # dec-layers | Language | simple |"
        + " complex | all |");
    assertThat(table.text()).contains("| 6 | 6 | OTSL HTML | 0.965 0.969 |");
    DocItem next = doc.items().get(table.position() + 1);
    assertThat(next.label()).isEqualTo("caption");
    assertThat(next.text()).startsWith("Table 1. HPO performed");
  }

  @Test
  @DisplayName("amt_handbook_sample.pdf: two columns read column by column, headers, footer")
  void twoColumns() throws Exception {
    ConvertedDocument doc = convert("amt_handbook_sample");
    ConversionReport r = report("amt_handbook_sample", doc.items());
    assertThat(r.tokenRecall()).isGreaterThanOrEqualTo(0.99);
    assertThat(r.tokenPrecision()).isGreaterThanOrEqualTo(0.99);
    assertThat(r.alignment()).isGreaterThanOrEqualTo(0.85);
    assertThat(r.labelAgreement()).isGreaterThanOrEqualTo(0.95);
    assertThat(r.headingLevelAgreement()).isEqualTo(1.0);
    List<String> texts = doc.items().stream().map(DocItem::text).toList();
    assertThat(doc.items()).filteredOn(i -> i.label().equals("section_header"))
        .extracting(DocItem::text).containsExactly("Boots Self-Locking Nut",
            "Stainless Steel Self-Locking Nut", "Elastic Stop Nut");
    // The left column is read before the right one.
    assertThat(indexOf(texts, "The two general types")).isLessThan(indexOf(texts, "The spring keeps"));
    assertThat(indexOf(texts, "The spring keeps")).isLessThan(
        indexOf(texts, "Stainless Steel Self-Locking Nut"));
    assertThat(doc.items()).filteredOn(i -> i.label().equals("page_footer"))
        .extracting(DocItem::text).containsExactly("7-45");
    // The figures' images reach past their clipped frames; neither picture may swallow the
    // paragraphs beside it, and each caption stays in its own column.
    assertThat(doc.items()).filteredOn(i -> i.label().equals("text")).extracting(DocItem::text)
        .anyMatch(t -> t.startsWith("The spring, through the medium"))
        .anyMatch(t -> t.startsWith("The elastic stop nut is a standard nut"));
    assertThat(indexOf(texts, "Figure 7-26")).isLessThan(
        indexOf(texts, "Stainless Steel Self-Locking Nut"));
    assertThat(indexOf(texts, "Elastic Stop Nut")).isLessThan(indexOf(texts, "Figure 7-27"));
    // The left column's last paragraph runs on at the top of the right column.
    assertThat(texts.get(indexOf(texts, "Boots self-locking nuts are made")))
        .contains("The wing type that is the most common ranges in size");
    assertThat(doc.items()).filteredOn(i -> i.label().equals("picture")).isNotEmpty();
    assertThat(doc.items()).filteredOn(i -> i.label().equals("caption")).extracting(DocItem::text)
        .contains("Figure 7-27. Stainless steel self-locking nut.");
  }

  /**
   * Floors per docling PDF pair, a little under what the converter reaches today (text recall,
   * label agreement, items aligned), so that a regression on any file fails here. The targets are
   * recall 0.97 and labels 0.85 on every PDF pair.
   */
  @org.junit.jupiter.params.ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource({
      "2305.03393v1-pg9, 0.99, 0.95, 0.95",
      "amt_handbook_sample, 0.99, 0.95, 0.85",
      "normal_4pages, 0.98, 0.85, 0.90",
      "right_to_left_01, 0.98, 0.99, 0.50"})
  @DisplayName("every docling PDF pair keeps its text recall, label agreement and alignment")
  void doclingPairFloors(String name, double recall, double labels, double aligned)
      throws Exception {
    ConversionReport r = report(name, convert(name).items());
    assertThat(r.tokenRecall()).as("text recall").isGreaterThanOrEqualTo(recall);
    assertThat(r.labelAgreement()).as("label agreement").isGreaterThanOrEqualTo(labels);
    assertThat(r.alignment()).as("alignment").isGreaterThanOrEqualTo(aligned);
  }

  @Test
  @DisplayName("normal_4pages.pdf (two-column Korean): paragraphs joined across lines, footnotes"
      + " labelled, runs stacked in one row kept apart, numbered headers found")
  void koreanReport() throws Exception {
    ConvertedDocument doc = convert("normal_4pages");
    List<String> texts = doc.items().stream().map(DocItem::text).toList();
    assertThat(texts).anyMatch(t -> t.startsWith("2020.3.30. 0시 기준 현재")
        && t.endsWith("사망자는 158명으로 나타났다."));
    assertThat(String.join("\n", texts)).contains("발행처 국회입법조사처")
        .contains("발행인 김하중 국회입법조사처장");
    assertThat(doc.items()).filteredOn(i -> i.label().equals("footnote")).extracting(DocItem::text)
        .anyMatch(t -> t.startsWith("1) 손해보험의 표준약관"))
        .anyMatch(t -> t.startsWith("10) 인덱스 보험이라고도"));
    assertThat(doc.items()).filteredOn(i -> i.label().equals("section_header"))
        .extracting(DocItem::text)
        .contains("(1) 「감염병의 예방 및 관리에 관한 법률」 개정", "(2) 생명보험 표준약관 재해분류표");
  }

  @Test
  @DisplayName("right_to_left_01.pdf (Arabic): the heading and the paragraphs in logical order")
  void arabic() throws Exception {
    ConvertedDocument doc = convert("right_to_left_01");
    assertThat(doc.items().get(0).text())
        .isEqualTo("تحسين الإنتاجية وحل المشكلات من خلال البرمجة بلغة R و Python");
    assertThat(doc.items()).extracting(DocItem::text)
        .anyMatch(t -> t.startsWith("تعتبر البرمجة بلغة R و Python من الأدوات القوية"));
  }

  private static int indexOf(List<String> texts, String prefix) {
    for (int i = 0; i < texts.size(); i++) {
      if (texts.get(i).startsWith(prefix)) {
        return i;
      }
    }
    throw new AssertionError("no item starts with " + prefix);
  }

  @Test
  @DisplayName("a password-protected PDF is refused as ENCRYPTED, naming the file")
  void encrypted() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (PDDocument doc = Loader.loadPDF(Files.readAllBytes(pdf("2305.03393v1-pg9")))) {
      StandardProtectionPolicy policy =
          new StandardProtectionPolicy("owner-secret", "user-secret", new AccessPermission());
      policy.setEncryptionKeyLength(128);
      doc.protect(policy);
      doc.save(out);
    }
    assertThatThrownBy(() -> converter.convert("locked.pdf", out.toByteArray()))
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(IngestException.Reason.ENCRYPTED);
          assertThat(e.getMessage()).startsWith("locked.pdf: ").contains("password");
        });
  }

  @Test
  @DisplayName("a truncated PDF is refused as CORRUPT, naming the file")
  void truncated() throws Exception {
    byte[] whole = Files.readAllBytes(pdf("2305.03393v1-pg9"));
    byte[] head = Arrays.copyOf(whole, 2_000);
    assertThatThrownBy(() -> converter.convert("cut.pdf", head))
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(IngestException.Reason.CORRUPT);
          assertThat(e.getMessage()).startsWith("cut.pdf: ");
        });
  }

  @Test
  @DisplayName("bytes that are not a PDF are refused as CORRUPT")
  void notPdf() {
    assertThatThrownBy(() -> converter.convert("notes.pdf", "hello".getBytes()))
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(IngestException.Reason.CORRUPT);
          assertThat(e.getMessage()).startsWith("notes.pdf: ").contains("no %PDF header");
        });
  }

  @Test
  @DisplayName("a PDF over the page limit is refused as TOO_LARGE before any layout work")
  void pageLimit() throws Exception {
    byte[] bytes = Files.readAllBytes(pdf("2305.03393v1-pg9"));
    assertThatThrownBy(() -> new PdfConverter(0, 60_000).convert("big.pdf", bytes))
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(IngestException.Reason.TOO_LARGE);
          assertThat(e.getMessage()).startsWith("big.pdf: ").contains("limit is 0");
        });
  }

  /**
   * Three pages of text in Helvetica, written as raw content so that page 2 can also show five
   * character codes (1 to 5) that WinAnsiEncoding maps to no character: what a font without a
   * Unicode mapping leaves in a real file.
   */
  static byte[] pdfWithUnmappedGlyphs() throws Exception {
    try (PDDocument doc = new PDDocument()) {
      PDType1Font font = new PDType1Font(Standard14Fonts.FontName.HELVETICA);
      for (int p = 1; p <= 3; p++) {
        PDPage page = new PDPage();
        PDResources resources = new PDResources();
        COSName f = resources.add(font);
        page.setResources(resources);
        String content = "BT /" + f.getName() + " 11 Tf 72 700 Td (Page " + p + " tells of the"
            + " survey and its cores.) Tj ET"
            + (p == 2 ? " BT /" + f.getName() + " 11 Tf 72 680 Td <0102030405> Tj ET" : "");
        PDStream stream = new PDStream(doc);
        try (OutputStream out = stream.createOutputStream()) {
          out.write(content.getBytes(StandardCharsets.ISO_8859_1));
        }
        page.setContents(stream);
        doc.addPage(page);
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      doc.save(out);
      return out.toByteArray();
    }
  }

  @Test
  @DisplayName("glyphs whose font maps them to no character are dropped and counted on their page,"
      + " through the converter and TextHygiene alike")
  void undecodableGlyphsCountedByPage() throws Exception {
    byte[] bytes = pdfWithUnmappedGlyphs();
    ConvertedDocument doc = converter.convert("unmapped.pdf", bytes);
    assertThat(doc.undecodableByPage()).isEqualTo(Map.of(2, 5));
    assertThat(doc.items()).extracting(DocItem::text)
        .allSatisfy(t -> assertThat(t.codePoints().filter(TextHygiene::undecodable)).isEmpty())
        .contains("Page 2 tells of the survey and its cores.");
    TextHygiene.Result clean = new Converters(Long.MAX_VALUE)
        .convertClean(SourceType.PDF, "unmapped.pdf", bytes);
    assertThat(clean.undecodableChars()).isEqualTo(5);
    assertThat(clean.undecodableByPage()).isEqualTo(Map.of(2, 5));
  }
}
