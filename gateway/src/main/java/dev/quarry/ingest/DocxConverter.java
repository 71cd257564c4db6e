package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.poi.EncryptedDocumentException;
import org.apache.poi.poifs.filesystem.FileMagic;
import org.apache.poi.poifs.filesystem.POIFSFileSystem;
import org.apache.poi.openxml4j.util.ZipSecureFile;
import org.apache.poi.xwpf.usermodel.IBodyElement;
import org.apache.poi.xwpf.usermodel.XWPFDocument;
import org.apache.poi.xwpf.usermodel.XWPFHeaderFooter;
import org.apache.poi.xwpf.usermodel.XWPFParagraph;
import org.apache.poi.xwpf.usermodel.XWPFPicture;
import org.apache.poi.xwpf.usermodel.XWPFRun;
import org.apache.poi.xwpf.usermodel.XWPFSDT;
import org.apache.poi.xwpf.usermodel.XWPFStyle;
import org.apache.poi.xwpf.usermodel.XWPFTable;
import org.apache.poi.xwpf.usermodel.XWPFTableCell;
import org.apache.poi.xwpf.usermodel.XWPFTableRow;
import org.openxmlformats.schemas.wordprocessingml.x2006.main.CTTcPr;
import org.openxmlformats.schemas.wordprocessingml.x2006.main.STMerge;

/**
 * Converts a Word (OOXML) document with Apache POI, mapping styles the way docling does: Title →
 * title, Heading N → section_header N, numbered paragraphs → list_item, Caption → caption, headers
 * and footers → page furniture. A DOCX has no reliable page numbers, so items carry none.
 */
public final class DocxConverter implements Converter {
  /** Compressed-to-expanded ratio below which an entry counts as a bomb (POI's default, stated). */
  static final double MIN_INFLATE_RATIO = 0.01;
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
  public ConvertedDocument convert(String fileName, byte[] bytes) throws IngestException {
    rejectNonDocx(fileName, bytes);
    try (XWPFDocument doc = new XWPFDocument(new ByteArrayInputStream(bytes))) {
      return convert(fileName, doc);
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
            "the archive expands too much to be safe (min inflate ratio " + MIN_INFLATE_RATIO
                + ", max entry " + MAX_ENTRY_SIZE + " bytes, max text " + MAX_TEXT_SIZE
                + " chars)", e);
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

  private ConvertedDocument convert(String fileName, XWPFDocument doc) {
    DocxItems items = new DocxItems();
    for (String header : headerFooterTexts(doc.getHeaderList())) {
      items.add("page_header", header, 0, 0);
    }
    for (IBodyElement element : doc.getBodyElements()) {
      if (element instanceof XWPFParagraph p) {
        paragraph(doc, p, items);
      } else if (element instanceof XWPFTable t) {
        items.table(MarkdownTable.render(grid(t)));
      } else if (element instanceof XWPFSDT sdt) {
        String text = sdt.getContent().getText().strip();
        if (!text.isEmpty()) {
          items.add("text", text, 0, 0);
        }
      }
    }
    for (String footer : headerFooterTexts(doc.getFooterList())) {
      items.add("page_footer", footer, 0, 0);
    }
    return new ConvertedDocument(title(fileName, doc, items.list), SourceType.DOCX, items.list);
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

  private static void paragraph(XWPFDocument doc, XWPFParagraph p, DocxItems items) {
    String text = p.getText().strip();
    String style = styleName(doc, p);
    if (!text.isEmpty()) {
      Matcher heading = HEADING.matcher(style);
      Integer ilvl = listLevel(p, style);
      if (style.equals("title")) {
        items.add("title", text, 0, 0);
      } else if (heading.matches()) {
        int level = Math.max(1, Math.min(6, Integer.parseInt(heading.group(1))));
        items.add("section_header", text, level, 0);
      } else if (style.equals("caption")) {
        items.add("caption", text, 0, 0);
      } else if (ilvl != null) {
        // A list item sits in a list group (depth 1); each indent level nests one group deeper.
        items.add("list_item", text, 0, 1 + ilvl);
      } else {
        items.add("text", text, 0, 0);
      }
    }
    for (XWPFRun run : p.getRuns()) {
      for (XWPFPicture picture : run.getEmbeddedPictures()) {
        String description = picture.getDescription();
        items.picture(description == null ? "" : description.strip().replaceAll("\\s+", " "));
      }
    }
  }

  private static String styleName(XWPFDocument doc, XWPFParagraph p) {
    String id = p.getStyleID();
    if (id == null) {
      return "";
    }
    XWPFStyle style = doc.getStyles() == null ? null : doc.getStyles().getStyle(id);
    String name = style != null && style.getName() != null ? style.getName() : id;
    return name.toLowerCase(Locale.ROOT).strip();
  }

  /**
   * The indent level when the paragraph is a list item, else null. Explicit numbering with numId
   * 0 switches numbering off even under a list style (Word's way of "continuing" a paragraph).
   */
  private static Integer listLevel(XWPFParagraph p, String style) {
    BigInteger numId = p.getNumID();
    if (numId != null) {
      if (numId.signum() == 0) {
        return null;
      }
      BigInteger ilvl = p.getNumIlvl();
      return ilvl == null ? 0 : Math.min(8, ilvl.intValue());
    }
    if (style.startsWith("list bullet") || style.startsWith("list number")) {
      return 0;
    }
    return null;
  }

  /**
   * The table as a rectangular grid: a cell spanning columns (gridSpan) or rows (vMerge) repeats
   * its text in every grid position it covers, as docling's Markdown export does.
   */
  static List<List<String>> grid(XWPFTable table) {
    List<List<String>> rows = new ArrayList<>();
    Map<Integer, String> openVertical = new HashMap<>();
    for (XWPFTableRow row : table.getRows()) {
      List<String> cells = new ArrayList<>();
      for (XWPFTableCell cell : row.getTableCells()) {
        CTTcPr pr = cell.getCTTc().getTcPr();
        int span = 1;
        if (pr != null && pr.isSetGridSpan() && pr.getGridSpan().getVal() != null) {
          span = Math.max(1, Math.min(64, pr.getGridSpan().getVal().intValue()));
        }
        String text = cellText(cell);
        int col = cells.size();
        if (pr != null && pr.isSetVMerge()) {
          STMerge.Enum merge = pr.getVMerge().getVal();
          if (merge == null || merge == STMerge.CONTINUE) {
            text = openVertical.getOrDefault(col, "");
          } else {
            openVertical.put(col, text);
          }
        } else {
          openVertical.remove(col);
        }
        for (int i = 0; i < span; i++) {
          cells.add(text);
        }
      }
      rows.add(cells);
    }
    return rows;
  }

  private static String cellText(XWPFTableCell cell) {
    StringBuilder sb = new StringBuilder();
    for (XWPFParagraph p : cell.getParagraphs()) {
      String t = p.getText().strip();
      if (!t.isEmpty()) {
        if (!sb.isEmpty()) {
          sb.append(' ');
        }
        sb.append(t);
      }
    }
    for (XWPFTable nested : cell.getTables()) {
      for (List<String> r : grid(nested)) {
        String t = String.join(" ", r).strip();
        if (!t.isEmpty()) {
          sb.append(sb.isEmpty() ? "" : " ").append(t);
        }
      }
    }
    return sb.toString();
  }

  /** Collects items, numbering self_refs per kind in order as DoclingDocument does. */
  private static final class DocxItems {
    final List<DocItem> list = new ArrayList<>();
    int texts;
    int tables;
    int pictures;

    void add(String label, String text, int headingLevel, int treeDepth) {
      list.add(new DocItem(list.size(), "#/texts/" + texts++, label, text, List.of(), headingLevel,
          treeDepth));
    }

    void table(String markdown) {
      if (!markdown.isEmpty()) {
        list.add(new DocItem(list.size(), "#/tables/" + tables++, "table", markdown, List.of(), 0,
            0));
      }
    }

    void picture(String text) {
      list.add(new DocItem(list.size(), "#/pictures/" + pictures++, "picture", text, List.of(), 0,
          0));
    }
  }
}
