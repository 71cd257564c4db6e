package dev.quarry.bench;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/**
 * What the noisy tenant uploads: small files whose tables declare huge grids (issue 33, attack 1),
 * and the large plain-text documents of its own that it reads back or scopes sandboxes to.
 */
final class HostileFiles {
  /** One file to upload: its name (the converter is chosen by its bytes, Markdown by the name) and bytes. */
  record Upload(String name, String contentType, byte[] bytes) {}

  private HostileFiles() {}

  /** The four hostile grids, each well under 0.5 MB. */
  static List<Upload> grids() {
    try {
      return List.of(html(), docling(), gfm(), docx());
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * 49 KB of HTML: two tables whose first row has 25 cells spanning {@code colspan=1000 rowspan=65535},
   * then about 5,600 empty rows each: every slot of 25,000 columns by 5,600 rows is laid out.
   */
  static Upload html() {
    StringBuilder sb = new StringBuilder("<html><body><h1>Grid</h1>");
    for (int t = 0; t < 2; t++) {
      sb.append("<table><tr>");
      for (int c = 0; c < 25; c++) {
        sb.append("<td colspan=1000 rowspan=65535>x</td>");
      }
      sb.append("</tr>");
      sb.append("<tr>".repeat(5_600));
      sb.append("</table>");
    }
    sb.append("</body></html>");
    return new Upload("grid.html", "text/html", sb.toString().getBytes(StandardCharsets.UTF_8));
  }

  /** DoclingDocument JSON: a table whose {@code data.grid} is one row of 20,000 cells and 60,000 empty rows. */
  static Upload docling() {
    StringBuilder grid = new StringBuilder("[[");
    for (int c = 0; c < 20_000; c++) {
      grid.append(c == 0 ? "" : ",").append("{\"text\":\"x\"}");
    }
    grid.append("]").append(",[]".repeat(60_000)).append("]");
    String json = """
        {"schema_name": "DoclingDocument", "version": "1.10.0", "name": "grid",
         "origin": {"mimetype": "application/pdf", "binary_hash": 1, "filename": "grid.pdf"},
         "furniture": {"self_ref": "#/furniture", "children": [], "content_layer": "furniture", "name": "_root_", "label": "unspecified"},
         "body": {"self_ref": "#/body", "children": [{"$ref": "#/texts/0"}, {"$ref": "#/tables/0"}], "content_layer": "body", "name": "_root_", "label": "unspecified"},
         "groups": [],
         "texts": [{"self_ref": "#/texts/0", "parent": {"$ref": "#/body"}, "children": [], "content_layer": "body", "label": "text", "prov": [], "orig": "Grid", "text": "Grid"}],
         "pictures": [],
         "tables": [{"self_ref": "#/tables/0", "parent": {"$ref": "#/body"}, "children": [], "content_layer": "body", "label": "table", "prov": [],
                     "captions": [], "references": [], "footnotes": [],
                     "data": {"table_cells": [], "num_rows": 60001, "num_cols": 20000, "grid": %s}}],
         "key_value_items": [], "form_items": [], "pages": {}}
        """.formatted(grid);
    return new Upload("grid.json", "application/json", json.getBytes(StandardCharsets.UTF_8));
  }

  /** A GitHub-style Markdown table whose header has 60,000 columns, then 20,000 one-cell rows. */
  static Upload gfm() {
    StringBuilder sb = new StringBuilder("# Grid\n\n");
    sb.append("|a".repeat(60_000)).append("|\n");
    sb.append("|-".repeat(60_000)).append("|\n");
    sb.append("|x|\n".repeat(20_000));
    return new Upload("grid.md", "text/markdown", sb.toString().getBytes(StandardCharsets.UTF_8));
  }

  /** A DOCX of under 1 KB whose table row starts with {@code w:gridBefore} of 1,500,000,000 empty columns. */
  static Upload docx() throws IOException {
    String w = "http://schemas.openxmlformats.org/wordprocessingml/2006/main";
    String document = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?><w:document xmlns:w=\"" + w + "\"><w:body>"
        + "<w:p><w:r><w:t>Grid</w:t></w:r></w:p><w:tbl>"
        + "<w:tr><w:trPr><w:gridBefore w:val=\"1500000000\"/></w:trPr><w:tc><w:p><w:r><w:t>a</w:t></w:r></w:p></w:tc>"
        + "<w:tc><w:p><w:r><w:t>b</w:t></w:r></w:p></w:tc></w:tr>"
        + "<w:tr><w:tc><w:p><w:r><w:t>c</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>d</w:t></w:r></w:p></w:tc></w:tr>"
        + "</w:tbl></w:body></w:document>";
    String types = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>"
        + "<Types xmlns=\"http://schemas.openxmlformats.org/package/2006/content-types\">"
        + "<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
        + "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
        + "<Override PartName=\"/word/document.xml\" ContentType=\"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/>"
        + "</Types>";
    String rels = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>"
        + "<Relationships xmlns=\"http://schemas.openxmlformats.org/package/2006/relationships\">"
        + "<Relationship Id=\"rId1\" Type=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\" Target=\"word/document.xml\"/>"
        + "</Relationships>";
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream zip = new ZipOutputStream(out)) {
      for (String[] part : new String[][] {{"[Content_Types].xml", types}, {"_rels/.rels", rels}, {"word/document.xml", document}}) {
        zip.putNextEntry(new ZipEntry(part[0]));
        zip.write(part[1].getBytes(StandardCharsets.UTF_8));
        zip.closeEntry();
      }
    }
    return new Upload("grid.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", out.toByteArray());
  }

  /**
   * About {@code chars} characters of plain text in paragraphs of (at most) twelve 120-letter words drawn from
   * 64, in Georgian letters (each paragraph one chunk). Words that long are each one unknown token to
   * the embedding model, and each letter is 3 bytes of UTF-8 in the files and responses the chunker
   * counts as one character: the noisy tenant's large documents cost little to embed for their size,
   * so the bench spends its minutes on the attacks, not on setting them up.
   */
  static String longWords(int chars, int seed) {
    List<String> vocabulary = new ArrayList<>();
    java.util.Random random = new java.util.Random(seed);
    for (int i = 0; i < 64; i++) {
      StringBuilder word = new StringBuilder();
      for (int c = 0; c < 120; c++) {
        word.append((char) (0x10D0 + random.nextInt(33)));
      }
      vocabulary.add(word.toString());
    }
    StringBuilder sb = new StringBuilder(chars + 2_000);
    sb.append("Harbour ledger ").append(seed).append("\n\n");
    // Short paragraphs in a short document, so that it ends near its size: the smallest copy is a page a file.
    int words = Math.max(1, Math.min(12, chars / (121 * 2)));
    while (sb.length() < chars) {
      for (int i = 0; i < words; i++) {
        sb.append(i == 0 ? "" : " ").append(vocabulary.get(random.nextInt(vocabulary.size())));
      }
      sb.append("\n\n");
    }
    return sb.toString();
  }
}
