package dev.quarry.ingest;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.quarry.ingest.IngestException.Reason;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Decides what a source is and which {@link Converter} reads it. The bytes decide: a file name's
 * extension and a declared content type are only hints, because uploads are often misnamed (a PDF
 * saved as {@code .txt}, HTML served as {@code text/plain}).
 */
public final class Converters {
  private static final JsonFactory JSON = new JsonFactory();

  private final long maxBytes;
  private final Map<SourceType, Converter> converters;
  private final ConverterHealth health = new ConverterHealth();

  public Converters(long maxBytes) {
    this(maxBytes, defaults());
  }

  public Converters(long maxBytes, Map<SourceType, Converter> converters) {
    this.maxBytes = maxBytes;
    this.converters = new EnumMap<>(converters);
    for (SourceType t : SourceType.values()) {
      if (!this.converters.containsKey(t)) {
        throw new IllegalArgumentException("no converter for " + t);
      }
    }
  }

  private static Map<SourceType, Converter> defaults() {
    Map<SourceType, Converter> m = new EnumMap<>(SourceType.class);
    m.put(SourceType.PDF, new PdfConverter());
    m.put(SourceType.DOCX, new DocxConverter());
    m.put(SourceType.DOCLING, new DoclingJsonConverter());
    m.put(SourceType.HTML, new HtmlConverter());
    m.put(SourceType.MARKDOWN, new MarkdownConverter());
    m.put(SourceType.TEXT, new TextConverter());
    return m;
  }

  /** Sniffs the type, then converts (under the default limits). Blocking: call it on a worker thread. */
  public ConvertedDocument convert(String fileName, String contentType, byte[] bytes)
      throws IngestException {
    return convertGuarded(detect(fileName, contentType, bytes), fileName, bytes,
        IngestBudget.of(fileName, bytes.length));
  }

  /** {@link #convertClean(SourceType, String, byte[], IngestBudget)} under the default limits. */
  public TextHygiene.Result convertClean(SourceType type, String fileName, byte[] bytes)
      throws IngestException {
    return convertClean(type, fileName, bytes, IngestBudget.of(fileName, bytes.length));
  }

  /**
   * What ingestion stores of a source already sniffed as {@code type}: its converter's items
   * through {@link TextHygiene}'s rule, the conversion under {@code budget}. IngestService and the
   * conversion benchmark both call this.
   */
  public TextHygiene.Result convertClean(SourceType type, String fileName, byte[] bytes,
      IngestBudget budget) throws IngestException {
    ConvertedDocument converted = convertGuarded(type, fileName, bytes, budget);
    try {
      TextHygiene.Result clean = TextHygiene.apply(fileName, converted);
      ConvertedDocument bounded = ItemBounds.apply(fileName, clean.document(), bytes.length);
      return bounded == clean.document() ? clean : new TextHygiene.Result(bounded,
          clean.undecodableChars(), clean.droppedItems(), clean.undecodableByPage());
    } catch (StackOverflowError e) {
      throw new IngestException(Reason.MALFORMED, fileName, "is nested too deeply to be stored", e);
    } catch (OutOfMemoryError e) {
      throw new IngestException(Reason.TOO_LARGE, fileName, "needs more memory to store than the gateway has"
          + " for one document", e);
    }
  }

  /** Whether each format still converts here (see {@link ConverterHealth}). */
  public ConverterHealth health() {
    return health;
  }

  /**
   * The converter's work, with what a hostile or freak source can drive it into turned into the
   * refusal it is, so that it reaches the client as a 4xx naming the file and never as a 500: a
   * limit of its budget reached, a nesting deep enough to overflow the stack, an allocation past the
   * heap. What the conversion allocated is unreachable once its stack has unwound; after running
   * out of memory the format's sample is converted again, in case a library was left half
   * initialised ({@link ConverterHealth}), and a format that no longer converts is refused with a
   * 503 until the gateway restarts.
   */
  private ConvertedDocument convertGuarded(SourceType type, String fileName, byte[] bytes,
      IngestBudget budget) throws IngestException {
    String broken = health.problem(type);
    if (broken != null) {
      throw unavailable(type, fileName, broken, null);
    }
    try {
      ConvertedDocument doc = converter(type).convert(fileName, bytes, budget);
      if (budget.tripped() != null) {
        throw budget.tripped();
      }
      return doc;
    } catch (IngestBudget.Exceeded e) {
      throw e.refusal();
    } catch (StackOverflowError e) {
      IngestException refusal = new IngestException(Reason.MALFORMED, fileName, "is nested too deeply to be read as "
          + type.wireName(), e);
      // A class being initialised when the stack ran out is as unusable as one that ran out of memory.
      health.check(this, type);
      throw refusal;
    } catch (OutOfMemoryError e) {
      IngestException refusal = new IngestException(Reason.TOO_LARGE, fileName, "needs more memory to convert (as "
          + type.wireName() + ") than the gateway has for one document", e);
      health.check(this, type);
      throw refusal;
    } catch (LinkageError e) {
      health.markBroken(type, e);
      throw unavailable(type, fileName, e.toString(), e);
    }
  }

  private static IngestException unavailable(SourceType type, String fileName, String why, Throwable cause) {
    return new IngestException(Reason.CONVERTER_UNAVAILABLE, fileName, "cannot be converted as "
        + type.wireName() + " by this gateway, whose " + type.wireName() + " converter no longer works (" + why
        + "); it reports not ready until it restarts: send the file again", cause);
  }

  public Converter converter(SourceType type) {
    return converters.get(type);
  }

  /** The source type of {@code bytes}, or an {@link IngestException} saying why there is none. */
  public SourceType detect(String fileName, String contentType, byte[] bytes) throws IngestException {
    if (bytes == null || bytes.length == 0) {
      throw new IngestException(Reason.EMPTY, fileName, "is empty (0 bytes)");
    }
    if (bytes.length > maxBytes) {
      throw new IngestException(Reason.TOO_LARGE, fileName, "is " + bytes.length
          + " bytes, over the upload limit of " + maxBytes + " bytes (QUARRY_MAX_UPLOAD_BYTES)");
    }
    Hint hint = Hint.of(fileName, contentType);
    if (isPdf(bytes)) {
      return SourceType.PDF;
    }
    if (startsWith(bytes, 0, 'P', 'K', 3, 4)) {
      return zipType(fileName, bytes);
    }
    String binary = knownBinary(bytes);
    if (binary != null) {
      throw new IngestException(Reason.UNSUPPORTED_TYPE, fileName, "is " + binary
          + ", not a supported document (PDF, DOCX, HTML, Markdown, text or DoclingDocument JSON)");
    }
    if (hint == Hint.PDF || hint == Hint.DOCX) {
      throw new IngestException(Reason.CORRUPT, fileName, "is named or declared as "
          + hint.name().toLowerCase(Locale.ROOT) + " but its bytes are not "
          + (hint == Hint.PDF ? "a PDF (no %PDF- header)" : "a DOCX (not a zip archive)"));
    }
    // UTF-16 text is full of NUL bytes: say what it is before calling it binary.
    if (startsWith(bytes, 0, 0xFF, 0xFE) || startsWith(bytes, 0, 0xFE, 0xFF)) {
      throw new IngestException(Reason.INVALID_ENCODING, fileName,
          "is UTF-16 text; only UTF-8 is accepted: save it as UTF-8 and upload it again");
    }
    if (indexOf(bytes, (byte) 0) >= 0) {
      throw new IngestException(Reason.UNSUPPORTED_TYPE, fileName,
          "is binary data (it contains NUL bytes) of an unknown type, not a supported document");
    }
    int bad = firstInvalidUtf8(bytes);
    if (bad >= 0) {
      if (hint == Hint.NONE && looksBinary(bytes)) {
        throw new IngestException(Reason.UNSUPPORTED_TYPE, fileName,
            "is binary data of an unknown type, not a supported document");
      }
      throw new IngestException(Reason.INVALID_ENCODING, fileName, "is not valid UTF-8 (bad byte 0x"
          + String.format("%02X", bytes[bad] & 0xFF) + " at offset " + bad
          + "); save it as UTF-8 and upload it again");
    }
    int start = skipBomAndSpace(bytes);
    if (start < bytes.length && bytes[start] == '{' && isDoclingJson(bytes)) {
      return SourceType.DOCLING;
    }
    if (hint == Hint.JSON) {
      throw new IngestException(Reason.UNSUPPORTED_TYPE, fileName, "is JSON but not a "
          + "DoclingDocument (its root has no \"schema_name\": \"DoclingDocument\")");
    }
    if (looksLikeHtml(bytes, start) || hint == Hint.HTML) {
      return SourceType.HTML;
    }
    if (hint == Hint.MARKDOWN) {
      return SourceType.MARKDOWN;
    }
    return SourceType.TEXT;
  }

  /** What the name and the declared type suggest. */
  private enum Hint {
    NONE, PDF, DOCX, HTML, MARKDOWN, JSON, TEXT;

    static Hint of(String fileName, String contentType) {
      String ct = contentType == null ? "" : contentType.toLowerCase(Locale.ROOT).split(";")[0].strip();
      switch (ct) {
        case "application/pdf":
          return PDF;
        case "application/vnd.openxmlformats-officedocument.wordprocessingml.document":
          return DOCX;
        case "text/html", "application/xhtml+xml":
          return HTML;
        case "text/markdown", "text/x-markdown":
          return MARKDOWN;
        case "application/json":
          return JSON;
        default:
          break;
      }
      String name = fileName == null ? "" : fileName.toLowerCase(Locale.ROOT);
      int dot = name.lastIndexOf('.');
      String ext = dot < 0 ? "" : name.substring(dot + 1);
      return switch (ext) {
        case "pdf" -> PDF;
        case "docx" -> DOCX;
        case "html", "htm", "xhtml" -> HTML;
        case "md", "markdown" -> MARKDOWN;
        case "json" -> JSON;
        case "txt", "text" -> TEXT;
        default -> ct.startsWith("text/") ? TEXT : NONE;
      };
    }
  }

  /** PDF readers accept the header anywhere in the first 1024 bytes; so do we. */
  private static boolean isPdf(byte[] b) {
    byte[] magic = "%PDF-".getBytes(StandardCharsets.US_ASCII);
    outer:
    for (int i = 0; i <= Math.min(1024, b.length - magic.length); i++) {
      for (int j = 0; j < magic.length; j++) {
        if (b[i + j] != magic[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }

  private static SourceType zipType(String fileName, byte[] bytes) throws IngestException {
    List<String> names = ZipDirectory.entryNames(fileName, bytes);
    if (names.contains("word/document.xml")) {
      return SourceType.DOCX;
    }
    String what;
    if (names.contains("xl/workbook.xml")) {
      what = "an Excel workbook (.xlsx)";
    } else if (names.contains("ppt/presentation.xml")) {
      what = "a PowerPoint presentation (.pptx)";
    } else if (names.contains("mimetype") && names.contains("content.xml")) {
      what = "an OpenDocument file (.odt/.ods/.odp); save it as .docx";
    } else if (names.contains("META-INF/container.xml")) {
      what = "an EPUB book";
    } else {
      what = "a zip archive of " + names.size() + " entries without word/document.xml, not a Word .docx";
    }
    throw new IngestException(Reason.UNSUPPORTED_TYPE, fileName, "is " + what
        + ", not a supported document");
  }

  /** Names common binary formats so the error tells the user what they actually uploaded. */
  private static String knownBinary(byte[] b) {
    if (startsWith(b, 0, 0xD0, 0xCF, 0x11, 0xE0)) {
      return "a legacy Office file (.doc/.xls/.ppt, OLE2); save it as .docx or PDF";
    }
    if (startsWith(b, 0, 0x89, 'P', 'N', 'G')) {
      return "a PNG image";
    }
    if (startsWith(b, 0, 0xFF, 0xD8, 0xFF)) {
      return "a JPEG image";
    }
    if (startsWith(b, 0, 'G', 'I', 'F', '8')) {
      return "a GIF image";
    }
    if (startsWith(b, 0, 0x1F, 0x8B)) {
      return "gzip-compressed data";
    }
    if (startsWith(b, 0, '{', '\\', 'r', 't', 'f')) {
      return "an RTF document; save it as .docx or PDF";
    }
    if (startsWith(b, 0, 0x7F, 'E', 'L', 'F') || startsWith(b, 0, 'M', 'Z')) {
      return "an executable";
    }
    return null;
  }

  private static boolean isDoclingJson(byte[] bytes) {
    try (JsonParser p = JSON.createParser(bytes)) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        return false;
      }
      // Streams over the root's fields, skipping their values: no tree is built for a big file.
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken value = p.nextToken();
        if ("schema_name".equals(field)) {
          return value == JsonToken.VALUE_STRING && "DoclingDocument".equals(p.getText());
        }
        p.skipChildren();
      }
      return false;
    } catch (IOException e) {
      return false;
    }
  }

  private static boolean looksLikeHtml(byte[] bytes, int start) {
    int end = Math.min(bytes.length, start + 64);
    String head = new String(bytes, start, end - start, StandardCharsets.UTF_8).toLowerCase(Locale.ROOT);
    return head.startsWith("<!doctype html") || head.startsWith("<html") || head.startsWith("<head")
        || head.startsWith("<body");
  }

  private static int skipBomAndSpace(byte[] b) {
    int i = startsWith(b, 0, 0xEF, 0xBB, 0xBF) ? 3 : 0;
    while (i < b.length && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r' || b[i] == '\f')) {
      i++;
    }
    return i;
  }

  /** More than 10% control characters in the first 4 KiB: data, not text in a wrong encoding. */
  private static boolean looksBinary(byte[] b) {
    int n = Math.min(b.length, 4096);
    int control = 0;
    for (int i = 0; i < n; i++) {
      int c = b[i] & 0xFF;
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') {
        control++;
      }
    }
    return control * 10 > n;
  }

  /** The offset of the first byte that is not part of a well-formed UTF-8 sequence, or -1. */
  static int firstInvalidUtf8(byte[] b) {
    int i = 0;
    while (i < b.length) {
      int c = b[i] & 0xFF;
      int len;
      int min;
      if (c < 0x80) {
        i++;
        continue;
      } else if (c >= 0xC2 && c <= 0xDF) {
        len = 2;
        min = 0x80;
      } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3;
        min = 0x800;
      } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4;
        min = 0x10000;
      } else {
        return i;
      }
      if (i + len > b.length) {
        return i;
      }
      int cp = c & (0xFF >> (len + 1));
      for (int k = 1; k < len; k++) {
        int cc = b[i + k] & 0xFF;
        if ((cc & 0xC0) != 0x80) {
          return i;
        }
        cp = (cp << 6) | (cc & 0x3F);
      }
      if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        return i;
      }
      i += len;
    }
    return -1;
  }

  private static boolean startsWith(byte[] b, int offset, int... magic) {
    if (b.length < offset + magic.length) {
      return false;
    }
    for (int i = 0; i < magic.length; i++) {
      if ((b[offset + i] & 0xFF) != magic[i]) {
        return false;
      }
    }
    return true;
  }

  private static int indexOf(byte[] b, byte v) {
    for (int i = 0; i < b.length; i++) {
      if (b[i] == v) {
        return i;
      }
    }
    return -1;
  }

  /**
   * Reads a zip's central directory (names only) without inflating anything, so sniffing a zip
   * bomb costs nothing.
   */
  static final class ZipDirectory {
    private static final int EOCD = 0x06054b50;
    private static final int CENTRAL = 0x02014b50;

    private ZipDirectory() {}

    static List<String> entryNames(String fileName, byte[] bytes) throws IngestException {
      ByteBuffer buf = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
      int eocd = -1;
      for (int i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 65_535); i--) {
        if (buf.getInt(i) == EOCD) {
          eocd = i;
          break;
        }
      }
      if (eocd < 0) {
        throw corrupt(fileName, "it has no end-of-central-directory record (truncated?)");
      }
      int count = Short.toUnsignedInt(buf.getShort(eocd + 10));
      long offset = Integer.toUnsignedLong(buf.getInt(eocd + 16));
      List<String> names = new ArrayList<>(count);
      int p = (int) Math.min(offset, Integer.MAX_VALUE);
      for (int e = 0; e < count; e++) {
        if (p < 0 || p + 46 > bytes.length || buf.getInt(p) != CENTRAL) {
          throw corrupt(fileName, "its central directory is damaged at entry " + e);
        }
        int nameLen = Short.toUnsignedInt(buf.getShort(p + 28));
        int extraLen = Short.toUnsignedInt(buf.getShort(p + 30));
        int commentLen = Short.toUnsignedInt(buf.getShort(p + 32));
        if (p + 46 + nameLen > bytes.length) {
          throw corrupt(fileName, "its central directory is damaged at entry " + e);
        }
        names.add(new String(bytes, p + 46, nameLen, StandardCharsets.UTF_8));
        p += 46 + nameLen + extraLen + commentLen;
      }
      return names;
    }

    private static IngestException corrupt(String fileName, String why) {
      return new IngestException(Reason.CORRUPT, fileName, "is a zip archive that cannot be read: " + why);
    }
  }
}
