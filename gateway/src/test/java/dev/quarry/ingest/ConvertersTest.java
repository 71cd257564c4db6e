package dev.quarry.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.ingest.IngestException.Reason;
import dev.quarry.support.SharedData;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Random;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Converters decide the source type from the bytes")
class ConvertersTest {
  private final Converters converters = new Converters(50L * 1024 * 1024);

  private static byte[] shared(String path) throws IOException {
    return Files.readAllBytes(SharedData.path(path));
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] zip(String... names) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream z = new ZipOutputStream(out)) {
      for (String n : names) {
        z.putNextEntry(new ZipEntry(n));
        z.write(utf8("<x/>"));
        z.closeEntry();
      }
    }
    return out.toByteArray();
  }

  @Test
  @DisplayName("real PDF, DOCX, HTML and DoclingDocument files are recognised whatever they are called")
  void realFiles() throws Exception {
    assertThat(converters.detect("a.bin", null, shared("docling/pdf/2305.03393v1-pg9.pdf")))
        .isEqualTo(SourceType.PDF);
    assertThat(converters.detect("upload", null, shared("docling/docx/word_sample.docx")))
        .isEqualTo(SourceType.DOCX);
    assertThat(converters.detect("page.txt", "text/plain", shared("docling/html/wiki_duck.html")))
        .isEqualTo(SourceType.HTML);
    assertThat(converters.detect("x", null, shared("docling/docling-json/2206.01062.json")))
        .isEqualTo(SourceType.DOCLING);
  }

  @Test
  @DisplayName("Markdown needs a hint (extension or content type); other UTF-8 text is plain text")
  void markdownAndText() throws Exception {
    byte[] md = shared("docling/md/wiki.md");
    assertThat(converters.detect("wiki.md", null, md)).isEqualTo(SourceType.MARKDOWN);
    assertThat(converters.detect("wiki.markdown", null, md)).isEqualTo(SourceType.MARKDOWN);
    assertThat(converters.detect("wiki", "text/markdown; charset=utf-8", md)).isEqualTo(SourceType.MARKDOWN);
    assertThat(converters.detect("notes", null, md)).isEqualTo(SourceType.TEXT);
    assertThat(converters.detect("notes.txt", null, utf8("héllo wörld"))).isEqualTo(SourceType.TEXT);
  }

  @Test
  @DisplayName("HTML is sniffed after a BOM and whitespace, case-insensitively, or taken from a hint")
  void htmlSniffing() throws Exception {
    assertThat(converters.detect("x", null, utf8("\uFEFF  \n<!DOCTYPE HTML><p>hi"))).isEqualTo(SourceType.HTML);
    assertThat(converters.detect("x", null, utf8("<html><body>hi</body></html>"))).isEqualTo(SourceType.HTML);
    assertThat(converters.detect("x", null, utf8("<body>hi"))).isEqualTo(SourceType.HTML);
    assertThat(converters.detect("x.htm", null, utf8("<p>fragment</p>"))).isEqualTo(SourceType.HTML);
    assertThat(converters.detect("x", null, utf8("<p>fragment</p>"))).isEqualTo(SourceType.TEXT);
  }

  @Test
  @DisplayName("a PDF header may follow junk bytes within the first KiB; bytes beat the extension")
  void pdfHeaderOffset() throws Exception {
    assertThat(converters.detect("report.txt", null, utf8("\n\n%PDF-1.7\n..."))).isEqualTo(SourceType.PDF);
  }

  @Test
  @DisplayName("JSON: the root's schema_name decides; other JSON named .json is refused")
  void json() throws Exception {
    assertThat(converters.detect("d.json", null,
        utf8("{\"version\": {\"a\": [1, 2]}, \"schema_name\": \"DoclingDocument\"}")))
        .isEqualTo(SourceType.DOCLING);
    // a nested schema_name does not count
    assertThat(converters.detect("d", null,
        utf8("{\"meta\": {\"schema_name\": \"DoclingDocument\"}}"))).isEqualTo(SourceType.TEXT);
    expect(() -> converters.detect("data.json", null, utf8("{\"a\": 1}")), Reason.UNSUPPORTED_TYPE,
        "data.json", "not a DoclingDocument");
  }

  @Test
  @DisplayName("empty input is refused as EMPTY, naming the file")
  void empty() throws Exception {
    expect(() -> converters.detect("empty.txt", null, new byte[0]), Reason.EMPTY, "empty.txt", "is empty");
  }

  @Test
  @DisplayName("input over the upload limit is refused as TOO_LARGE and the limit is named")
  void tooLarge() throws Exception {
    Converters small = new Converters(10);
    expect(() -> small.detect("big.txt", null, utf8("eleven char")), Reason.TOO_LARGE, "big.txt",
        "over the upload limit of 10 bytes");
  }

  @Test
  @DisplayName("unknown binary (NUL bytes) is refused as UNSUPPORTED_TYPE")
  void unknownBinary() throws Exception {
    byte[] junk = new byte[4096];
    new Random(7).nextBytes(junk);
    junk[0] = 1; // not a known magic number
    junk[100] = 0;
    expect(() -> converters.detect("blob.dat", null, junk), Reason.UNSUPPORTED_TYPE, "blob.dat", "binary");
  }

  @Test
  @DisplayName("known binary formats are named in the error")
  void knownBinary() throws Exception {
    byte[] png = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0, 0};
    expect(() -> converters.detect("scan.pdf", null, png), Reason.UNSUPPORTED_TYPE, "scan.pdf", "a PNG image");
    byte[] ole = {(byte) 0xD0, (byte) 0xCF, 0x11, (byte) 0xE0, 0, 0};
    expect(() -> converters.detect("old.doc", null, ole), Reason.UNSUPPORTED_TYPE, "old.doc", "legacy Office");
  }

  @Test
  @DisplayName("a zip that is not a Word document says what it is instead")
  void zipNotDocx() throws Exception {
    expect(() -> converters.detect("archive.docx", null, zip("a.txt", "b/c.txt")), Reason.UNSUPPORTED_TYPE,
        "archive.docx", "zip archive of 2 entries without word/document.xml");
    expect(() -> converters.detect("book.xlsx", null, zip("[Content_Types].xml", "xl/workbook.xml")),
        Reason.UNSUPPORTED_TYPE, "book.xlsx", "Excel workbook");
    assertThat(converters.detect("renamed.zip", null, zip("[Content_Types].xml", "word/document.xml")))
        .isEqualTo(SourceType.DOCX);
  }

  @Test
  @DisplayName("a truncated zip is CORRUPT, not a crash")
  void truncatedZip() throws Exception {
    byte[] whole = zip("word/document.xml");
    byte[] cut = java.util.Arrays.copyOf(whole, 30);
    expect(() -> converters.detect("cut.docx", null, cut), Reason.CORRUPT, "cut.docx", "cannot be read");
  }

  @Test
  @DisplayName("a file named .pdf without a PDF header is CORRUPT")
  void misnamedPdf() throws Exception {
    expect(() -> converters.detect("paper.pdf", null, utf8("just some text")), Reason.CORRUPT,
        "paper.pdf", "not a PDF");
  }

  @Test
  @DisplayName("Latin-1 text is INVALID_ENCODING with the offset of the first bad byte")
  void invalidUtf8() {
    byte[] latin1 = "caf\u00e9 au lait".getBytes(StandardCharsets.ISO_8859_1);
    expect(() -> converters.detect("menu.txt", null, latin1), Reason.INVALID_ENCODING, "menu.txt",
        "not valid UTF-8 (bad byte 0xE9 at offset 3)");
    expect(() -> converters.detect("menu", null, latin1), Reason.INVALID_ENCODING, "menu", "offset 3");
    byte[] utf16 = "\uFEFFhi".getBytes(StandardCharsets.UTF_16LE);
    expect(() -> converters.detect("w.txt", null, utf16), Reason.INVALID_ENCODING, "w.txt", "UTF-16");
  }

  @Test
  @DisplayName("overlong encodings and surrogates are not valid UTF-8")
  void strictUtf8() {
    assertThat(Converters.firstInvalidUtf8(new byte[] {'a', (byte) 0xC0, (byte) 0x80})).isEqualTo(1);
    assertThat(Converters.firstInvalidUtf8(new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80})).isZero();
    assertThat(Converters.firstInvalidUtf8(utf8("日本語 ✓ 😀"))).isEqualTo(-1);
    assertThat(Converters.firstInvalidUtf8(new byte[] {'a', 'b', (byte) 0xE6, (byte) 0x97})).isEqualTo(2);
  }

  @Test
  @DisplayName("convert() runs the converter of the sniffed type")
  void convertDispatches() throws Exception {
    ConvertedDocument doc = converters.convert("n.txt", null, utf8("Title\n\nBody."));
    assertThat(doc.sourceType()).isEqualTo(SourceType.TEXT);
    assertThat(doc.items()).hasSize(2);
  }

  @Test
  @DisplayName("every real sample goes through the converter of its type")
  void realConversions() throws Exception {
    String[][] samples = {
        {"docling/pdf/2305.03393v1-pg9.pdf", "PDF"},
        {"docling/docx/word_sample.docx", "DOCX"},
        {"docling/html/wiki_duck.html", "HTML"},
        {"docling/md/wiki.md", "MARKDOWN"},
        {"docling/docling-json/2206.01062.json", "DOCLING"}};
    for (String[] s : samples) {
      String name = s[0].substring(s[0].lastIndexOf('/') + 1);
      ConvertedDocument doc = converters.convert(name, null, shared(s[0]));
      assertThat(doc.sourceType()).as(name).isEqualTo(SourceType.valueOf(s[1]));
      assertThat(doc.items()).as(name).isNotEmpty();
    }
  }

  @Test
  @DisplayName("a converter driven into a stack overflow or out of memory is a refusal naming the file, not an error")
  void parserErrorsAreRefusals() {
    java.util.Map<SourceType, Converter> throwing = new java.util.EnumMap<>(SourceType.class);
    for (SourceType t : SourceType.values()) {
      throwing.put(t, (name, bytes, budget) -> {
        if (bytes[0] == 's') {
          throw new StackOverflowError();
        }
        throw new OutOfMemoryError("Java heap space");
      });
    }
    Converters broken = new Converters(1024, throwing);
    expect(() -> broken.convertClean(SourceType.TEXT, "deep.txt", utf8("s")), Reason.MALFORMED, "deep.txt",
        "nested too deeply");
    expect(() -> broken.convert("big.txt", null, utf8("m")), Reason.TOO_LARGE, "big.txt", "more memory");
  }

  @Test
  @DisplayName("what ingestion stores has no item over the bound: a text file without blank lines comes as pieces")
  void storedItemsAreBounded() throws Exception {
    StringBuilder log = new StringBuilder();
    for (int i = 0; log.length() < 2 * ItemBounds.MAX_ITEM_CHARS + 5000; i++) {
      log.append("2026-12-03T10:00:").append(i).append(" worker ").append(i % 7).append(" finished job\n");
    }
    ConvertedDocument doc = converters.convertClean(SourceType.TEXT, "app.log", utf8(log.toString())).document();
    assertThat(doc.items()).hasSizeGreaterThanOrEqualTo(3)
        .allSatisfy(it -> assertThat(it.text().length()).isLessThanOrEqualTo(ItemBounds.MAX_ITEM_CHARS));
    assertThat(doc.items()).extracting(it -> it.selfRef()).containsOnly(doc.items().get(0).selfRef());
    assertThat(String.join("\n", doc.items().stream().map(it -> it.text()).toList()))
        .isEqualTo(log.toString().strip());
  }

  static void expect(ThrowingCallable call, Reason reason, String fileName, String detail) {
    assertThatThrownBy(call)
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(reason);
          assertThat(e.fileName()).isEqualTo(fileName);
        })
        .hasMessageStartingWith(fileName + ": ")
        .hasMessageContaining(detail);
  }
}
