package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.poi.EncryptedDocumentException;
import org.apache.poi.poifs.filesystem.FileMagic;
import org.apache.poi.poifs.filesystem.POIFSFileSystem;
import org.apache.poi.openxml4j.util.ZipSecureFile;
import org.apache.poi.xwpf.usermodel.XWPFDocument;
import org.apache.poi.xwpf.usermodel.XWPFHeaderFooter;

/**
 * Converts a Word (OOXML) document with Apache POI, mapping styles the way docling does: Title →
 * title, Heading N → section_header N, numbered paragraphs → list_item, Caption → caption, headers
 * and footers → page furniture. A DOCX has no reliable page numbers, so items carry none.
 */
public final class DocxConverter implements Converter {
  /**
   * POI's own ratio check is off: it applies to every part, images too, and {@link DocxPackage}
   * has already inflated every part for real, holding XML parts to a ratio and the others to a
   * size.
   */
  static final double MIN_INFLATE_RATIO = 0.0;
  /** Largest expanded size of one zip entry. */
  static final long MAX_ENTRY_SIZE = 256L * 1024 * 1024;
  /** Most characters POI may extract from one document. */
  static final long MAX_TEXT_SIZE = 20L * 1024 * 1024;

  private static final Pattern HEADING = Pattern.compile("heading\\s*(\\d)");
  private static final Pattern BARE_PAGE_NUMBER =
      Pattern.compile("(?i)(page\\s*)?\\d+(\\s*(of|/)\\s*\\d+)?");

  static {
    // POI keeps these limits in static state; set them here so they do not depend on POI's
    // defaults of the day or on another library's settings.
    ZipSecureFile.setMinInflateRatio(MIN_INFLATE_RATIO);
    ZipSecureFile.setMaxEntrySize(MAX_ENTRY_SIZE);
    ZipSecureFile.setMaxTextSize(MAX_TEXT_SIZE);
  }

  @Override
  public ConvertedDocument convert(String fileName, byte[] bytes, IngestBudget budget)
      throws IngestException {
    rejectNonDocx(fileName, bytes);
    byte[] readable = DocxPackage.check(fileName, bytes, budget);
    try (XWPFDocument doc = new XWPFDocument(new ByteArrayInputStream(readable))) {
      return convert(fileName, doc, budget);
    } catch (IngestBudget.Exceeded e) {
      throw e;
    } catch (EncryptedDocumentException e) {
      throw new IngestException(IngestException.Reason.ENCRYPTED, fileName,
          "the document is password-protected", e);
    } catch (Exception e) {
      throw classify(fileName, e);
    }
  }

  private static void rejectNonDocx(String fileName, byte[] bytes) throws IngestException {
    FileMagic magic;
    try {
      magic = FileMagic.valueOf(bytes);
    } catch (RuntimeException e) {
      magic = FileMagic.UNKNOWN;
    }
    if (magic == FileMagic.OLE2) {
      // An encrypted OOXML file is an OLE2 container holding EncryptionInfo + EncryptedPackage;
      // any other OLE2 file is a legacy binary .doc, which this converter does not read.
      try (POIFSFileSystem fs = new POIFSFileSystem(new ByteArrayInputStream(bytes))) {
        if (fs.getRoot().hasEntry("EncryptionInfo")) {
          throw new IngestException(IngestException.Reason.ENCRYPTED, fileName,
              "the document is password-protected (encrypted OOXML package)");
        }
      } catch (IOException e) {
        throw new IngestException(IngestException.Reason.CORRUPT, fileName,
            "not a valid DOCX file (damaged OLE2 container)", e);
      }
      throw new IngestException(IngestException.Reason.CORRUPT, fileName,
          "not a DOCX file (a legacy binary Word .doc or other OLE2 file)");
    }
    if (magic != FileMagic.OOXML) {
      throw new IngestException(IngestException.Reason.CORRUPT, fileName,
          "not a DOCX file (not a zip package)");
    }
  }

  private static IngestException classify(String fileName, Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      String m = String.valueOf(t.getMessage());
      if (m.contains("Zip bomb") || m.contains("max allowed overall size")
          || m.contains("ZipSecureFile")) {
        return new IngestException(IngestException.Reason.ARCHIVE_BOMB, fileName,
            "the archive expands too much to be safe (max entry " + MAX_ENTRY_SIZE + " bytes, max text "
                + MAX_TEXT_SIZE + " chars)", e);
      }
    }
    return new IngestException(IngestException.Reason.CORRUPT, fileName,
        "not a readable DOCX file: " + rootMessage(e), e);
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    String m = t.getMessage();
    return m == null ? t.getClass().getSimpleName() : m;
  }

  private ConvertedDocument convert(String fileName, XWPFDocument doc, IngestBudget budget) {
    ItemListBuilder items = new ItemListBuilder(budget);
    for (String header : headerFooterTexts(doc.getHeaderList())) {
      items.text("page_header", header, 0, 0);
    }
    DocxBody body = new DocxBody(doc, items);
    body.blocks(doc.getDocument().getBody().getDomNode(), 0);
    body.finish();
    for (String footer : headerFooterTexts(doc.getFooterList())) {
      items.text("page_footer", footer, 0, 0);
    }
    return new ConvertedDocument(title(fileName, doc, items.items()), SourceType.DOCX, items.items());
  }

  private static String title(String fileName, XWPFDocument doc, List<DocItem> items) {
    String core = doc.getProperties().getCoreProperties().getTitle();
    if (core != null && !core.isBlank()) {
      return core.strip();
    }
    return ItemListBuilder.title(items, fileName);
  }

  /**
   * Distinct header (or footer) texts: sections often repeat the same one. A bare page number is
   * the cached result of a PAGE field from the last time Word laid the document out; it says
   * nothing about any page here, so it is left out.
   */
  private static Set<String> headerFooterTexts(List<? extends XWPFHeaderFooter> parts) {
    Set<String> texts = new LinkedHashSet<>();
    for (XWPFHeaderFooter part : parts) {
      String text = part.getText().strip().replaceAll("\\s+", " ");
      if (!text.isEmpty() && !BARE_PAGE_NUMBER.matcher(text).matches()) {
        texts.add(text);
      }
    }
    return texts;
  }
}
