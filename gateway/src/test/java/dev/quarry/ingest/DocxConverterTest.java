package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.support.SharedData;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class DocxConverterTest {
  private final DocxConverter converter = new DocxConverter();

  private ConvertedDocument sample() throws Exception {
    byte[] bytes = Files.readAllBytes(SharedData.path("docling/docx/word_sample.docx"));
    return converter.convert("word_sample.docx", bytes);
  }

  @Test
  @DisplayName("word_sample.docx: styles map to docling labels, in body order")
  void sampleLabels() throws Exception {
    ConvertedDocument doc = sample();
    assertThat(doc.sourceType()).isEqualTo(SourceType.DOCX);
    assertThat(doc.items()).filteredOn(i -> i.label().equals("title")).extracting(DocItem::text)
        .containsExactly("Swimming in the lake");
    assertThat(doc.items()).filteredOn(i -> i.label().equals("section_header"))
        .extracting(DocItem::text, DocItem::headingLevel)
        .containsExactly(org.assertj.core.groups.Tuple.tuple("Let’s swim!", 1),
            org.assertj.core.groups.Tuple.tuple("Let’s eat", 2));
    assertThat(doc.items()).filteredOn(i -> i.label().equals("list_item"))
        .extracting(DocItem::text).containsExactly("You can relax and look around",
            "Paddle about", "Enjoy summer warmth", "Wear sunglasses",
            "Don’t forget to drink water", "Use sun cream", "Leaves", "Berries", "Grain");
    assertThat(doc.items()).filteredOn(i -> i.label().equals("list_item"))
        .allSatisfy(i -> assertThat(i.treeDepth()).isEqualTo(1));
    assertThat(doc.items()).filteredOn(i -> i.label().equals("picture")).hasSize(1);
    assertThat(doc.items()).filteredOn(i -> i.label().equals("caption")).extracting(DocItem::text)
        .containsExactly("Figure 1: This is a cute duckling");
    assertThat(doc.items()).allSatisfy(i -> assertThat(i.pageNumbers()).isEmpty());
    // The footer holds only a PAGE field's stale cached value, which is not kept.
    assertThat(doc.items()).noneMatch(i -> i.label().equals("page_footer"));
  }

  @Test
  @DisplayName("a password-protected DOCX is refused as ENCRYPTED, naming the file")
  void encrypted() throws Exception {
    byte[] plain = Files.readAllBytes(SharedData.path("docling/docx/word_sample.docx"));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (org.apache.poi.poifs.filesystem.POIFSFileSystem fs =
        new org.apache.poi.poifs.filesystem.POIFSFileSystem()) {
      org.apache.poi.poifs.crypt.EncryptionInfo info = new org.apache.poi.poifs.crypt
          .EncryptionInfo(org.apache.poi.poifs.crypt.EncryptionMode.standard);
      org.apache.poi.poifs.crypt.Encryptor encryptor = info.getEncryptor();
      encryptor.confirmPassword("secret");
      try (java.io.OutputStream os = encryptor.getDataStream(fs)) {
        os.write(plain);
      }
      fs.writeFilesystem(out);
    }
    assertThatThrownBy(() -> converter.convert("locked.docx", out.toByteArray()))
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(IngestException.Reason.ENCRYPTED);
          assertThat(e.getMessage()).startsWith("locked.docx: ").contains("password");
        });
  }

  @Test
  @DisplayName("word_sample.docx: agreement with docling's reference output")
  void sampleAgreement() {
    ConversionReport r = ConversionReport.of(converter,
        SharedData.path("docling/docx/word_sample.docx"));
    System.out.println(r.summary());
    assertThat(r.tokenRecall()).isGreaterThanOrEqualTo(0.99);
    assertThat(r.tokenPrecision()).isGreaterThanOrEqualTo(0.99);
    assertThat(r.alignment()).isGreaterThanOrEqualTo(0.95);
    assertThat(r.labelAgreement()).isGreaterThanOrEqualTo(0.95);
    assertThat(r.headingLevelAgreement()).isEqualTo(1.0);
    assertThat(r.tablesAgree()).isTrue();
  }

  @Test
  @DisplayName("word_sample.docx: the table renders as docling's Markdown grid")
  void sampleTable() throws Exception {
    List<DocItem> tables = sample().items().stream().filter(i -> i.label().equals("table"))
        .toList();
    assertThat(tables).hasSize(1);
    assertThat(tables.get(0).selfRef()).isEqualTo("#/tables/0");
    assertThat(tables.get(0).text()).isEqualTo("""
        |  | Food | Calories per portion |
        |---|---|---|
        | Leaves | Ash, Elm, Maple | 50 |
        | Berries | Blueberry, Strawberry, Cranberry | 150 |
        | Grain | Corn, Buckwheat, Barley | 200 |""");
  }

  @Test
  @DisplayName("a zip bomb is refused as ARCHIVE_BOMB, naming the file")
  void zipBomb() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream zip = new ZipOutputStream(out)) {
      zip.putNextEntry(new ZipEntry("[Content_Types].xml"));
      zip.write(("<?xml version=\"1.0\"?><Types xmlns=\"http://schemas.openxmlformats.org/"
          + "package/2006/content-types\"><Default Extension=\"xml\" ContentType=\"application/"
          + "vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/></Types>")
          .getBytes(StandardCharsets.UTF_8));
      zip.putNextEntry(new ZipEntry("word/document.xml"));
      byte[] block = new byte[1 << 20];
      java.util.Arrays.fill(block, (byte) ' ');
      for (int i = 0; i < 40; i++) {
        zip.write(block);
      }
    }
    byte[] bomb = out.toByteArray();
    assertThat(bomb.length).isLessThan(1 << 20);
    assertThatThrownBy(() -> converter.convert("bomb.docx", bomb))
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(IngestException.Reason.ARCHIVE_BOMB);
          assertThat(e.getMessage()).startsWith("bomb.docx: ").contains("expands too much");
        });
  }

  @Test
  @DisplayName("a zip that is not a Word document is CORRUPT, naming the file")
  void notDocxZip() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream zip = new ZipOutputStream(out)) {
      zip.putNextEntry(new ZipEntry("hello.txt"));
      zip.write("hello".getBytes(StandardCharsets.UTF_8));
    }
    assertThatThrownBy(() -> converter.convert("archive.docx", out.toByteArray()))
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(IngestException.Reason.CORRUPT);
          assertThat(e.getMessage()).startsWith("archive.docx: ").contains("not a readable DOCX");
        });
  }

  @Test
  @DisplayName("bytes that are not a zip at all are CORRUPT")
  void notZip() {
    assertThatThrownBy(() -> converter.convert("notes.docx",
        "just text".getBytes(StandardCharsets.UTF_8)))
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(IngestException.Reason.CORRUPT);
          assertThat(e.getMessage()).contains("notes.docx").contains("not a zip");
        });
  }
}
