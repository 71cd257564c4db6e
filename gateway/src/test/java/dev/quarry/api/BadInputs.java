package dev.quarry.api;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.PDPage;
import org.apache.pdfbox.pdmodel.PDPageContentStream;
import org.apache.pdfbox.pdmodel.encryption.AccessPermission;
import org.apache.pdfbox.pdmodel.encryption.StandardProtectionPolicy;
import org.apache.pdfbox.pdmodel.font.PDType1Font;
import org.apache.pdfbox.pdmodel.font.Standard14Fonts;

/**
 * Files that must be refused, each with the status and error code the API answers with. The same
 * list drives the HTTP tests and the CLI tests.
 */
public final class BadInputs {
  private BadInputs() {}

  public record BadInput(String fileName, byte[] bytes, int status, String code) {
    @Override
    public String toString() {
      return fileName + " -> " + status + " " + code;
    }
  }

  public static List<BadInput> all() throws IOException {
    return List.of(
        new BadInput("empty.txt", new byte[0], 422, "empty"),
        new BadInput("photo.png", png(), 415, "unsupported_type"),
        new BadInput("broken.pdf", "%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >>\ngarbage, no xref, no trailer"
            .getBytes(StandardCharsets.US_ASCII), 422, "corrupt"),
        new BadInput("locked.pdf", encryptedPdf(), 422, "encrypted"),
        new BadInput("bomb.docx", docxBomb(), 422, "archive_bomb"),
        new BadInput("pictures.html", "<html><body><img src=a.png alt=''><p>\u0001\uFFFD</p></body></html>"
            .getBytes(StandardCharsets.UTF_8), 422, "no_text_extracted"),
        new BadInput("broken.docling.json", "{\"schema_name\": \"DoclingDocument\", \"version\": \"1.10.0\", \"texts\": 5}"
            .getBytes(StandardCharsets.UTF_8), 422, "malformed"),
        new BadInput("latin1.md", "# Caf\u00e9\n\nna\u00efve".getBytes(StandardCharsets.ISO_8859_1), 422, "invalid_encoding"),
        new BadInput("huge.md", overTheLimit(), 413, "too_large"));
  }

  private static byte[] png() {
    byte[] bytes = new byte[64];
    byte[] signature = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    System.arraycopy(signature, 0, bytes, 0, signature.length);
    return bytes;
  }

  private static byte[] encryptedPdf() throws IOException {
    try (PDDocument doc = new PDDocument()) {
      PDPage page = new PDPage();
      doc.addPage(page);
      try (PDPageContentStream cs = new PDPageContentStream(doc, page)) {
        cs.beginText();
        cs.setFont(new PDType1Font(Standard14Fonts.FontName.HELVETICA), 12);
        cs.newLineAtOffset(72, 700);
        cs.showText("Confidential crossing figures");
        cs.endText();
      }
      StandardProtectionPolicy policy = new StandardProtectionPolicy("owner-secret", "user-secret", new AccessPermission());
      policy.setEncryptionKeyLength(128);
      doc.protect(policy);
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      doc.save(out);
      return out.toByteArray();
    }
  }

  /** 40 MiB of spaces as word/document.xml: a few tens of KiB on the wire. */
  private static byte[] docxBomb() throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream zip = new ZipOutputStream(out)) {
      zip.putNextEntry(new ZipEntry("[Content_Types].xml"));
      zip.write(("<?xml version=\"1.0\"?><Types xmlns=\"http://schemas.openxmlformats.org/package/2006/"
          + "content-types\"><Default Extension=\"xml\" ContentType=\"application/vnd.openxmlformats-"
          + "officedocument.wordprocessingml.document.main+xml\"/></Types>").getBytes(StandardCharsets.UTF_8));
      zip.putNextEntry(new ZipEntry("word/document.xml"));
      byte[] block = new byte[1 << 20];
      Arrays.fill(block, (byte) ' ');
      for (int i = 0; i < 40; i++) {
        zip.write(block);
      }
    }
    return out.toByteArray();
  }

  private static byte[] overTheLimit() {
    String line = "Every sailing is logged with its departure time and passenger count.\n";
    return line.repeat((int) (TestGateway.UPLOAD_LIMIT / line.length()) + 200).getBytes(StandardCharsets.UTF_8);
  }
}
