package dev.quarry.ingest;

import dev.quarry.ingest.IngestException.Reason;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.ZipEntry;
import java.util.zip.ZipInputStream;
import java.util.zip.ZipOutputStream;

/**
 * What a DOCX package must pass before POI opens it, read once by inflating every entry for real
 * (so sizes a crafted directory declares do not matter):
 *
 * <ul>
 *   <li>the archive-bomb guard: an XML part (names ending {@code .xml}, {@code .rels}, {@code
 *       .vml}) may not expand more than {@link #MAX_XML_EXPANSION} times its compressed size once
 *       it is over {@link #RATIO_FROM_BYTES}; any other part (images: EMF and BMP compress 40:1
 *       or more and are harmless) has an absolute cap instead, {@link #MAX_BINARY_PART_BYTES};
 *       and the whole package at most {@link #MAX_TOTAL_BYTES} expanded;
 *   <li>what POI will hold, charged to the conversion's budget before POI opens it: every part
 *       inflated (POI reads them all into memory), and its model of the XML, {@link
 *       #ELEMENT_BYTES} an element (POI and XMLBeans held 140 to 405 bytes an element,
 *       measured on 4 MB of each of seven shapes, an empty paragraph the most) and two bytes a
 *       character; and no XML nested deeper than {@link IngestBudget#MAX_NESTING} elements (POI
 *       recurses into nested tables, and so do the body's walks);
 *   <li>Strict Open XML (Word's "Strict Open XML Document", namespaces under {@code
 *       http://purl.oclc.org/ooxml/}) is rewritten to the transitional namespaces, which POI
 *       reads; the two differ in namespaces, not in the elements Quarry reads.
 * </ul>
 */
final class DocxPackage {
  static final int MAX_XML_EXPANSION = 100;
  static final long RATIO_FROM_BYTES = 1L << 20;
  static final long MAX_BINARY_PART_BYTES = 64L << 20;
  static final long MAX_TOTAL_BYTES = 512L << 20;
  /** What POI's model of one XML element may cost, with room over the 405 bytes measured. */
  static final int ELEMENT_BYTES = 450;

  private static final String STRICT = "http://purl.oclc.org/ooxml/";
  private static final Pattern STRICT_NS = Pattern.compile("http://purl\\.oclc\\.org/ooxml/([A-Za-z]+)/([A-Za-z]+)");

  private DocxPackage() {}

  /** The bytes POI should open: {@code bytes} itself, or its transitional rewrite when Strict. */
  static byte[] check(String fileName, byte[] bytes, IngestBudget budget) throws IngestException {
    boolean strict = false;
    long total = 0;
    long xmlBytes = 0;
    XmlShape shape = new XmlShape(budget);
    try (Counting counted = new Counting(new ByteArrayInputStream(bytes));
        ZipInputStream zip = new ZipInputStream(counted)) {
      byte[] buf = new byte[64 * 1024];
      for (ZipEntry e = zip.getNextEntry(); e != null; e = zip.getNextEntry()) {
        boolean xml = isXml(e.getName());
        shape.startPart(e.getName());
        long compressedStart = counted.count;
        long expanded = 0;
        boolean head = true;
        for (int n = zip.read(buf); n > 0; n = zip.read(buf)) {
          if (xml && head) {
            strict |= new String(buf, 0, Math.min(n, 4096), StandardCharsets.ISO_8859_1).contains(STRICT);
            head = false;
          }
          expanded += n;
          total += n;
          if (xml) {
            xmlBytes += n;
            shape.scan(buf, n);
          }
          long compressed = Math.max(1, counted.count - compressedStart);
          if (xml && expanded > RATIO_FROM_BYTES && expanded > MAX_XML_EXPANSION * compressed) {
            throw bomb(fileName, "its XML part " + e.getName() + " expands more than " + MAX_XML_EXPANSION
                + " times its compressed size");
          }
          if (!xml && expanded > MAX_BINARY_PART_BYTES) {
            throw bomb(fileName, "its part " + e.getName() + " expands past " + MAX_BINARY_PART_BYTES + " bytes");
          }
          if (total > MAX_TOTAL_BYTES) {
            throw bomb(fileName, "its parts expand past " + MAX_TOTAL_BYTES + " bytes in all");
          }
        }
      }
    } catch (IOException e) {
      throw new IngestException(Reason.CORRUPT, fileName, "not a readable DOCX file: " + e.getMessage(), e);
    }
    // POI holds every part inflated (its zip source reads them all), then its model of the XML.
    budget.memory(total + 2 * xmlBytes + ELEMENT_BYTES * shape.elements, "the DOCX's parts (" + total
        + " bytes inflated, " + shape.elements + " XML elements)");
    if (strict) {
      budget.memory(4L * bytes.length + 2 * xmlBytes, "the DOCX rewritten from Strict Open XML");
      return transitional(fileName, bytes);
    }
    return bytes;
  }

  /**
   * Counts the elements of XML parts and follows their depth as the bytes go by, without parsing:
   * a start tag opens one, an end tag or a {@code />} closes it; declarations, comments and
   * processing instructions are skipped. Deeper than {@link IngestBudget#MAX_NESTING} is refused.
   */
  static final class XmlShape {
    private final IngestBudget budget;
    long elements;
    private String part = "";
    private int depth;
    /** 0 text, 1 just after '<', 2 in a start tag, 3 in an end tag, 4 in a declaration. */
    private int state;
    private byte previous;

    XmlShape(IngestBudget budget) {
      this.budget = budget;
    }

    void startPart(String name) {
      part = name;
      depth = 0;
      state = 0;
      previous = 0;
    }

    void scan(byte[] buf, int n) {
      for (int i = 0; i < n; i++) {
        byte b = buf[i];
        switch (state) {
          case 0 -> {
            if (b == '<') {
              state = 1;
            }
          }
          case 1 -> {
            if (b == '/') {
              state = 3;
            } else if (b == '?' || b == '!') {
              state = 4;
            } else {
              state = 2;
              elements++;
              if (++depth > IngestBudget.MAX_NESTING) {
                budget.nesting(depth, "XML elements in elements in " + part);
              }
            }
          }
          case 2 -> {
            if (b == '>') {
              if (previous == '/') {
                depth--;
              }
              state = 0;
            }
          }
          default -> {
            if (b == '>') {
              if (state == 3) {
                depth--;
              }
              state = 0;
            }
          }
        }
        previous = b;
      }
    }
  }

  private static boolean isXml(String name) {
    String n = name.toLowerCase(Locale.ROOT);
    return n.endsWith(".xml") || n.endsWith(".rels") || n.endsWith(".vml");
  }

  private static IngestException bomb(String fileName, String why) {
    return new IngestException(Reason.ARCHIVE_BOMB, fileName, "the archive expands too much to be safe: " + why);
  }

  /** The package with every XML part's Strict namespaces (and relationship types) made transitional. */
  private static byte[] transitional(String fileName, byte[] bytes) throws IngestException {
    ByteArrayOutputStream out = new ByteArrayOutputStream(bytes.length * 2);
    try (ZipInputStream in = new ZipInputStream(new ByteArrayInputStream(bytes));
        ZipOutputStream zip = new ZipOutputStream(out)) {
      for (ZipEntry e = in.getNextEntry(); e != null; e = in.getNextEntry()) {
        byte[] part = in.readAllBytes();
        if (isXml(e.getName())) {
          part = transitional(new String(part, StandardCharsets.UTF_8)).getBytes(StandardCharsets.UTF_8);
        }
        zip.putNextEntry(new ZipEntry(e.getName()));
        zip.write(part);
        zip.closeEntry();
      }
    } catch (IOException e) {
      throw new IngestException(Reason.CORRUPT, fileName, "not a readable DOCX file: " + e.getMessage(), e);
    }
    return out.toByteArray();
  }

  /** {@code http://purl.oclc.org/ooxml/<area>/<name>} → {@code http://schemas.openxmlformats.org/<area>/2006/<name>}. */
  static String transitional(String xml) {
    Matcher m = STRICT_NS.matcher(xml);
    StringBuilder sb = new StringBuilder(xml.length());
    while (m.find()) {
      String name = switch (m.group(2)) {
        case "extendedProperties" -> "extended-properties";
        case "customProperties" -> "custom-properties";
        default -> m.group(2);
      };
      m.appendReplacement(sb, Matcher.quoteReplacement(
          "http://schemas.openxmlformats.org/" + m.group(1) + "/2006/" + name));
    }
    m.appendTail(sb);
    return sb.toString();
  }

  /** Counts the compressed bytes the inflater has taken so far. */
  private static final class Counting extends FilterInputStream {
    long count;

    Counting(InputStream in) {
      super(in);
    }

    @Override
    public int read() throws IOException {
      int b = super.read();
      count += b < 0 ? 0 : 1;
      return b;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      int n = super.read(b, off, len);
      count += Math.max(0, n);
      return n;
    }
  }
}
