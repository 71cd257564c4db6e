package dev.quarry.ingest;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipOutputStream;

/** Minimal DOCX packages written by hand around a body, for forms POI cannot generate. */
final class DocxFixture {
  static final String NAMESPACES = " xmlns:w=\"http://schemas.openxmlformats.org/wordprocessingml/2006/main\""
      + " xmlns:m=\"http://schemas.openxmlformats.org/officeDocument/2006/math\""
      + " xmlns:r=\"http://schemas.openxmlformats.org/officeDocument/2006/relationships\""
      + " xmlns:mc=\"http://schemas.openxmlformats.org/markup-compatibility/2006\""
      + " xmlns:wps=\"http://schemas.microsoft.com/office/word/2010/wordprocessingShape\""
      + " xmlns:wp=\"http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing\""
      + " xmlns:a=\"http://schemas.openxmlformats.org/drawingml/2006/main\""
      + " xmlns:pic=\"http://schemas.openxmlformats.org/drawingml/2006/picture\""
      + " xmlns:v=\"urn:schemas-microsoft-com:vml\" xmlns:o=\"urn:schemas-microsoft-com:office:office\"";

  private static final String STYLES = "<w:styles" + NAMESPACES + ">"
      + style("Code", "Code") + style("HTMLPreformatted", "HTML Preformatted") + style("Heading1", "heading 1")
      + "</w:styles>";

  private DocxFixture() {}

  private static String style(String id, String name) {
    return "<w:style w:type=\"paragraph\" w:styleId=\"" + id + "\"><w:name w:val=\"" + name + "\"/></w:style>";
  }

  /** A paragraph of plain runs. */
  static String p(String text) {
    return "<w:p><w:r><w:t xml:space=\"preserve\">" + text + "</w:t></w:r></w:p>";
  }

  /** A package whose document body is {@code body}, with styles Code, HTMLPreformatted, Heading1. */
  static byte[] docx(String body) {
    return docx(body, Map.of());
  }

  static byte[] docx(String body, Map<String, byte[]> extraParts) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (ZipOutputStream zip = new ZipOutputStream(out)) {
      put(zip, "[Content_Types].xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Types xmlns=\""
          + "http://schemas.openxmlformats.org/package/2006/content-types\">"
          + "<Default Extension=\"rels\" ContentType=\"application/vnd.openxmlformats-package.relationships+xml\"/>"
          + "<Default Extension=\"xml\" ContentType=\"application/xml\"/>"
          + "<Default Extension=\"emf\" ContentType=\"image/x-emf\"/>"
          + "<Override PartName=\"/word/document.xml\" ContentType=\"application/"
          + "vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml\"/>"
          + "<Override PartName=\"/word/styles.xml\" ContentType=\"application/"
          + "vnd.openxmlformats-officedocument.wordprocessingml.styles+xml\"/></Types>");
      put(zip, "_rels/.rels", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\""
          + "http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\""
          + "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument\""
          + " Target=\"word/document.xml\"/></Relationships>");
      put(zip, "word/_rels/document.xml.rels", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Relationships xmlns=\""
          + "http://schemas.openxmlformats.org/package/2006/relationships\"><Relationship Id=\"rId1\" Type=\""
          + "http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles\" Target=\"styles.xml\"/>"
          + "</Relationships>");
      put(zip, "word/styles.xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>" + STYLES);
      put(zip, "word/document.xml", "<?xml version=\"1.0\" encoding=\"UTF-8\"?><w:document" + NAMESPACES
          + "><w:body>" + body + "</w:body></w:document>");
      for (Map.Entry<String, byte[]> e : extraParts.entrySet()) {
        zip.putNextEntry(new ZipEntry(e.getKey()));
        zip.write(e.getValue());
        zip.closeEntry();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  /** The same package in Strict Open XML's namespaces, as Word saves "Strict Open XML Document". */
  static byte[] strict(String body) {
    String strictBody = body;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (var in = new java.util.zip.ZipInputStream(new java.io.ByteArrayInputStream(docx(strictBody)));
        ZipOutputStream zip = new ZipOutputStream(out)) {
      for (ZipEntry e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
        String xml = new String(in.readAllBytes(), StandardCharsets.UTF_8)
            .replace("http://schemas.openxmlformats.org/wordprocessingml/2006/main", "http://purl.oclc.org/ooxml/wordprocessingml/main")
            .replace("http://schemas.openxmlformats.org/officeDocument/2006/relationships", "http://purl.oclc.org/ooxml/officeDocument/relationships")
            .replace("http://schemas.openxmlformats.org/officeDocument/2006/math", "http://purl.oclc.org/ooxml/officeDocument/math")
            .replace("http://schemas.openxmlformats.org/drawingml/2006/", "http://purl.oclc.org/ooxml/drawingml/");
        put(zip, e.getName(), xml);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }

  private static void put(ZipOutputStream zip, String name, String content) throws IOException {
    zip.putNextEntry(new ZipEntry(name));
    zip.write(content.getBytes(StandardCharsets.UTF_8));
    zip.closeEntry();
  }
}
