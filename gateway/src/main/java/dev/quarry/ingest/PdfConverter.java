package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import dev.quarry.ingest.PdfLayout.Block;
import dev.quarry.ingest.PdfLayout.Line;
import dev.quarry.ingest.PdfLayout.Picture;
import dev.quarry.ingest.PdfLayout.Table;
import dev.quarry.ingest.PdfLayout.Form;
import dev.quarry.ingest.PdfLayout.Unit;
import dev.quarry.ingest.PdfPageReader.Glyph;
import dev.quarry.ingest.PdfPageReader.Page;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.apache.pdfbox.Loader;
import org.apache.pdfbox.io.MemoryUsageSetting;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.encryption.InvalidPasswordException;

/**
 * Converts a PDF with PDFBox: glyph geometry per page, then {@link PdfLayout} for lines, tables,
 * pictures, paragraphs and reading order, then labels from font size and weight relative to the
 * document's body font; header levels follow the header font sizes when there are two or three.
 * A table continued on the next page is joined into one item ({@link PdfContinuedTables}). Work is
 * bounded by a page limit, per-page glyph caps and a deadline over reading and layout.
 */
public final class PdfConverter implements Converter {
  static final int MAX_PAGES = 2_000;
  static final long MAX_MILLIS = 120_000;
  static final long MAX_MEMORY_BYTES = 512L * 1024 * 1024;

  private static final Pattern PAGE_NUMBER = Pattern.compile(
      "(?i)(page\\s*)?([\\divxlc]+|[A-Z]?\\d+[-–.]\\d+)(\\s*(of|/)\\s*\\d+)?");
  /** A figure as a statement's cell shows it: 54, 5,480, (1,049), 12.5%, "16 $" (the next sign). */
  private static final Pattern MARGIN_FIGURE = Pattern.compile(
      "[$€£¥(\\s]*\\d[\\d,.]*\\)?%?\\s*[$€£¥]?");
  private static final Pattern MID_SENTENCE = Pattern.compile(".*[\\p{Ll},;\\-]$",
      Pattern.DOTALL);
  private static final Pattern BULLET_PREFIX = Pattern.compile("^[•●◦▪■□‣⁃∙·\\-–*]\\s+");
  private static final Pattern DOTTED_NUMBER = Pattern.compile("(\\d{1,2}(\\.\\d{1,2}){0,5})\\.?\\s");
  private static final Pattern TRAILING_PUNCTUATION = Pattern.compile(".*[.,;:]$");
  /** A footnote's marker: a number (with a bracket or stop), a symbol, or superscript digits. */
  static final Pattern FOOTNOTE_MARKER = Pattern.compile(
      "^(\\(?\\d{1,3}[).]?|\\[\\d{1,3}]|[*†‡§¶※#]|[¹²³⁰⁴-⁹]+)\\s*[^\\d\\s].*", Pattern.DOTALL);
  /**
   * Section numbering: "1", "2.3", "2.3.1.", "IV.", "A.", "(1)". The number of its parts gives the
   * heading's depth.
   */
  static final Pattern SECTION_NUMBER = Pattern.compile(
      "^(\\d{1,2}(\\.\\d{1,2}){0,4}\\.?|[IVXLC]{1,6}\\.|[A-Z]\\.|\\(\\d{1,2}\\)|\\(?[a-z]\\))\\s+\\S.*",
      Pattern.DOTALL);

  private final int maxPages;
  private final long maxMillis;

  public PdfConverter() {
    this(MAX_PAGES, MAX_MILLIS);
  }

  PdfConverter(int maxPages, long maxMillis) {
    this.maxPages = maxPages;
    this.maxMillis = maxMillis;
  }

  @Override
  public ConvertedDocument convert(String fileName, byte[] bytes, IngestBudget budget)
      throws IngestException {
    // Every stream PDFBox decodes for this conversion is counted against its budget.
    try (PdfStreams.Binding bound = PdfStreams.bind(budget)) {
      return convertBounded(fileName, bytes, budget);
    } finally {
      // PDFBox keeps every name it ever parsed in a static map, for the life of the process: a PDF
      // of a million distinct names would leave them all on the heap after its ingest, and the
      // next such PDF as many more. Names compare by their bytes, so dropping the map is safe for
      // conversions still running (its own predefined names stay).
      org.apache.pdfbox.cos.COSName.clearResources();
    }
  }

  private ConvertedDocument convertBounded(String fileName, byte[] bytes, IngestBudget budget)
      throws IngestException {
    if (!startsWithPdfHeader(bytes)) {
      throw new IngestException(IngestException.Reason.CORRUPT, fileName,
          "not a PDF file (no %PDF header)");
    }
    long deadline = System.currentTimeMillis() + maxMillis;
    try (PDDocument doc = Loader.loadPDF(bytes, "", null, null,
        MemoryUsageSetting.setupMainMemoryOnly(MAX_MEMORY_BYTES).streamCache)) {
      int pageCount = doc.getNumberOfPages();
      if (pageCount == 0) {
        throw new IngestException(IngestException.Reason.CORRUPT, fileName,
            "the PDF has no readable pages (damaged or truncated)");
      }
      if (pageCount > maxPages) {
        throw new IngestException(IngestException.Reason.TOO_LARGE, fileName,
            "the PDF has " + pageCount + " pages; the limit is " + maxPages);
      }
      List<Page> pages = new ArrayList<>(pageCount);
      for (int i = 0; i < pageCount; i++) {
        if (System.currentTimeMillis() > deadline) {
          throw new IngestException(IngestException.Reason.TOO_LARGE, fileName,
              "reading the PDF took longer than " + maxMillis / 1000 + " s (stopped at page "
                  + (i + 1) + " of " + pageCount + ")");
        }
        try {
          pages.add(PdfPageReader.read(doc, i, deadline, budget));
        } catch (PdfPageReader.PageTooComplex e) {
          throw new IngestException(IngestException.Reason.TOO_LARGE, fileName, "page " + (i + 1)
              + " of " + pageCount + " " + e.getMessage() + " (" + maxMillis / 1000 + " s for the whole PDF)");
        }
      }
      String infoTitle = doc.getDocumentInformation().getTitle();
      List<DocItem> items = items(pages, fileName, deadline, budget);
      Map<Integer, Integer> undecodable = new HashMap<>();
      for (Page page : pages) {
        if (page.undecodable() > 0) {
          undecodable.put(page.number(), page.undecodable());
        }
      }
      return new ConvertedDocument(title(fileName, infoTitle, items), SourceType.PDF, items,
          undecodable);
    } catch (InvalidPasswordException e) {
      throw new IngestException(IngestException.Reason.ENCRYPTED, fileName,
          "the PDF is encrypted and needs a password", e);
    } catch (IngestBudget.Exceeded e) {
      throw e;
    } catch (IOException | RuntimeException e) {
      throw new IngestException(IngestException.Reason.CORRUPT, fileName,
          "not a readable PDF (damaged or truncated): " + e.getMessage(), e);
    }
  }

  private static boolean startsWithPdfHeader(byte[] bytes) {
    // The header may follow some junk; PDF readers accept it within the first kilobyte.
    String head = new String(bytes, 0, Math.min(bytes.length, 1024),
        java.nio.charset.StandardCharsets.ISO_8859_1);
    return head.contains("%PDF-");
  }

  private static String title(String fileName, String infoTitle, List<DocItem> items) {
    for (DocItem item : items) {
      if (item.label().equals("title")) {
        return item.text();
      }
    }
    if (infoTitle != null && !infoTitle.isBlank()) {
      return infoTitle.strip();
    }
    // A page or a report without a title of its own: its first heading says more than a file name.
    return ItemListBuilder.title(items, fileName);
  }

  // ---- labelling ----

  private List<DocItem> items(List<Page> pages, String fileName, long deadline, IngestBudget budget)
      throws IngestException {
    float bodySize = bodySize(pages);
    boolean listingsByFont = !mostlyMono(pages);
    List<List<Line>> pageLines = new ArrayList<>();
    for (Page page : pages) {
      pageLines.add(new ArrayList<>(PdfLayout.lines(page)));
    }
    Set<String> repeated = repeatedMargins(pages, pageLines);
    PdfItems items = new PdfItems(budget);
    boolean titleSeen = false;
    for (int p = 0; p < pages.size(); p++) {
      if (System.currentTimeMillis() > deadline) {
        throw new IngestException(IngestException.Reason.TOO_LARGE, fileName,
            "laying out the PDF took longer than " + maxMillis / 1000 + " s (stopped at page "
                + (p + 1) + " of " + pages.size() + ")");
      }
      Page page = pages.get(p);
      List<Line> lines = pageLines.get(p);
      List<Line> headers = new ArrayList<>();
      List<Line> footers = new ArrayList<>();
      for (Line l : lines) {
        if (isFurniture(l, page, lines, repeated, bodySize)) {
          (l.box().centerY() < page.height() / 2 ? headers : footers).add(l);
        }
      }
      lines.removeAll(headers);
      lines.removeAll(footers);
      List<Block> listings = listingsByFont ? PdfCode.find(lines) : List.of();
      PdfLayout.joinBullets(lines);
      // Statements first: their underlines and total rules would read as a ruled table's rows.
      List<Table> tables = PdfStatements.find(lines, page.rulings());
      List<Form> forms = new ArrayList<>();
      tables.addAll(PdfLayout.tables(page, lines, forms));
      List<Picture> pictures = PdfLayout.pictures(page, lines);
      tables.addAll(PdfLayout.alignedTables(lines));
      List<Block> blocks = PdfLayout.blocks(lines);
      List<Unit> units = new ArrayList<>(blocks);
      units.addAll(listings);
      units.addAll(forms);
      units.addAll(tables);
      units.addAll(pictures);
      Map<Unit, Block> captions = attachCaptions(units, blocks);
      units.removeAll(captions.values());
      List<Integer> pageNo = List.of(page.number());

      for (Unit u : PdfLayout.order(headers.stream().map(PdfConverter::single).toList())) {
        items.text("page_header", text(((Block) u).lines()), pageNo, 0, 0);
      }
      List<Unit> ordered = PdfLayout.order(units);
      Map<Block, Block> continuations = continuations(ordered, bodySize, page);
      float footnotesTop = footnotesTop(ordered, bodySize, page);
      for (Unit unit : ordered) {
        if (continuations.containsValue(unit)) {
          continue;
        }
        switch (unit) {
          case Table t -> {
            items.table(t.grid(), pageNo);
            Block caption = captions.get(t);
            if (caption != null) {
              items.text("caption", text(caption.lines()), pageNo, 0, 1);
            }
          }
          case Picture pic -> {
            Block caption = captions.get(pic);
            items.picture(caption == null ? "" : text(caption.lines()), pageNo);
            if (caption != null) {
              items.text("caption", text(caption.lines()), pageNo, 0, 1);
            }
            for (Unit inner : PdfLayout.order(PdfLayout.blocks(pic.inner()))) {
              items.text("text", text(((Block) inner).lines()), pageNo, 0, 1);
            }
          }
          case Form f -> f.fields().forEach(field -> items.text("text", field, pageNo, 0, 0));
          case Block b when listings.contains(b) -> items.text("code", PdfCode.text(b), pageNo, 0, 0);
          case Block b -> {
            String label = label(b, bodySize, p == 0 && !titleSeen, page);
            if (b.box().top() >= footnotesTop - 0.5f && size(b) <= bodySize - 1
                && !label.equals("caption") && !bodyBelow(b, ordered, bodySize)) {
              label = "footnote";
            }
            titleSeen |= label.equals("title");
            Block next = continuations.get(b);
            String text = next == null ? text(b.lines())
                : text(java.util.stream.Stream.concat(b.lines().stream(), next.lines().stream())
                    .toList());
            if (label.equals("list_item")) {
              items.text(label, BULLET_PREFIX.matcher(text).replaceFirst(""), pageNo, 0, 1);
            } else if (label.equals("section_header")) {
              items.header(text, pageNo, size(b));
            } else {
              items.text(label, text, pageNo, 0, 0);
            }
          }
        }
      }
      for (Unit u : PdfLayout.order(footers.stream().map(PdfConverter::single).toList())) {
        items.text("page_footer", text(((Block) u).lines()), pageNo, 0, 0);
      }
    }
    return PdfContinuedTables.join(items.withHeadingLevels(), items.grids, budget);
  }

  /**
   * Where the page's footnotes start: the top of the highest block in the lower half of the page
   * set smaller than the body and starting with a footnote marker. Every smaller block from there
   * down is a footnote (or its continuation); {@code MAX_VALUE} when there is none.
   */
  private static float footnotesTop(List<Unit> ordered, float bodySize, Page page) {
    float top = Float.MAX_VALUE;
    for (Unit u : ordered) {
      if (u instanceof Block b && b.box().top() >= 0.5f * page.height()
          && size(b) <= bodySize - 1 && FOOTNOTE_MARKER.matcher(text(b.lines())).matches()
          && !PdfLayout.CAPTION.matcher(text(b.lines())).matches()
          && !bodyBelow(b, ordered, bodySize)) {
        top = Math.min(top, b.box().top());
      }
    }
    return top;
  }

  /** Whether body-sized text or a table follows below {@code b} in its column. */
  private static boolean bodyBelow(Block b, List<Unit> units, float bodySize) {
    for (Unit u : units) {
      boolean sameColumn = Math.min(u.box().x1(), b.box().x1())
          - Math.max(u.box().x0(), b.box().x0()) > 0;
      if (u != b && sameColumn && u.box().top() > b.box().bottom()
          && (u instanceof Table || u instanceof Block o && size(o) > bodySize - 0.5f)) {
        return true;
      }
    }
    return false;
  }

  private static float size(Block b) {
    float size = 0;
    for (Line l : b.lines()) {
      size = Math.max(size, l.size());
    }
    return size;
  }

  /**
   * A paragraph that runs on into the next column: the block ends mid-sentence and the next text
   * block in reading order (figures and captions skipped) starts higher up, in lower case. Maps the first
   * block to its continuation, which then reads as part of it, as docling joins them.
   */
  private static Map<Block, Block> continuations(List<Unit> ordered, float bodySize, Page page) {
    Map<Block, Block> out = new HashMap<>();
    Block open = null;
    for (Unit u : ordered) {
      if (!(u instanceof Block b) || PdfLayout.CAPTION.matcher(text(b.lines())).matches()
          || b.lines().stream().allMatch(Line::mono)) {
        continue; // captions and listings neither continue prose nor are continued by it
      }
      String text = text(b.lines());
      if (open != null && Character.isLowerCase(text.codePointAt(0))
          && b.box().top() < open.box().bottom()
          && Math.abs(b.lines().get(0).size() - open.lines().get(0).size()) <= 0.7f
          && label(b, bodySize, false, page).equals("text")) {
        out.put(open, b);
        open = null;
        continue;
      }
      open = label(b, bodySize, false, page).equals("text") && !out.containsValue(b)
          && MID_SENTENCE.matcher(text).matches() ? b : null;
    }
    return out;
  }

  private static Block single(Line l) {
    return new Block(List.of(l), l.box());
  }

  /**
   * Whether the document is typed throughout in a fixed-pitch font (a typescript, a text dump):
   * nearly all of its glyphs are. A programming text may set most of a page in its listings, so
   * "most" is not enough.
   */
  private static boolean mostlyMono(List<Page> pages) {
    long mono = 0;
    long all = 0;
    for (Page page : pages) {
      for (Glyph g : page.glyphs()) {
        mono += g.mono() ? 1 : 0;
        all++;
      }
    }
    return mono > 0.85 * all;
  }

  /** The most common glyph size: the body text's size, against which headings stand out. */
  private static float bodySize(List<Page> pages) {
    Map<Integer, Integer> counts = new HashMap<>();
    for (Page page : pages) {
      for (Glyph g : page.glyphs()) {
        counts.merge(Math.round(g.size() * 2), 1, Integer::sum);
      }
    }
    return counts.entrySet().stream().max(Map.Entry.comparingByValue())
        .map(e -> e.getKey() / 2f).orElse(10f);
  }

  private static String marginKey(Line l) {
    return l.text().toLowerCase(Locale.ROOT).replaceAll("\\d+", "#").strip();
  }

  private static boolean inMargin(Line l, Page page) {
    return l.box().bottom() <= 0.14f * page.height() || l.box().top() >= 0.9f * page.height();
  }

  /** Margin texts (page numbers masked) found on at least two pages: running headers/footers. */
  private static Set<String> repeatedMargins(List<Page> pages, List<List<Line>> pageLines) {
    Map<String, Integer> seen = new HashMap<>();
    for (int p = 0; p < pages.size(); p++) {
      Set<String> onPage = new HashSet<>();
      for (Line l : pageLines.get(p)) {
        if (inMargin(l, pages.get(p))) {
          onPage.add(marginKey(l));
        }
      }
      onPage.forEach(k -> seen.merge(k, 1, Integer::sum));
    }
    Set<String> repeated = new HashSet<>();
    int needed = Math.max(2, pages.size() / 4);
    seen.forEach((k, n) -> {
      if (n >= needed) {
        repeated.add(k);
      }
    });
    return repeated;
  }

  /**
   * Page furniture: in the top or bottom margin, and a bare page number, a text repeated on other
   * pages, or a short line in at most the body size set well apart from the body.
   */
  private static boolean isFurniture(Line l, Page page, List<Line> lines, Set<String> repeated,
      float bodySize) {
    if (!inMargin(l, page) || PdfLayout.CAPTION.matcher(l.text()).matches()) {
      return false;
    }
    if (numberAmongNumbers(l, lines)) {
      return false; // a row of years or figures set high on the page: a table's, not a folio
    }
    boolean known = PAGE_NUMBER.matcher(l.text().strip()).matches()
        || repeated.contains(marginKey(l));
    if (!known && l.size() > bodySize + 0.5f) {
      return false;
    }
    boolean top = l.box().bottom() <= 0.14f * page.height();
    float nearest = Float.MAX_VALUE;
    for (Line o : lines) {
      if (o == l) {
        continue;
      }
      float gap = top ? o.box().top() - l.baseline() : l.box().top() - o.baseline();
      boolean beyond = top ? o.baseline() > l.baseline() + 1 : o.baseline() < l.baseline() - 1;
      if (beyond) {
        nearest = Math.min(nearest, gap);
      }
    }
    if (known) {
      // Further from the body than a paragraph's own line spacing.
      return nearest >= 0.8f * l.size();
    }
    // Unrecognised margin text passes for furniture only when set apart by size or by space.
    return l.size() < bodySize - 0.5f ? nearest >= 1.2f * l.size() : nearest >= 2.5f * l.size();
  }

  /**
   * A line of a table row set high or low on the page: a figure with another figure on its
   * baseline ("2022   2021   2020" over a statement's columns, "16 $   5,480   (1,049)" of its
   * first row), or a label or a lone currency sign with two or more ("Years Ended December 31,
   * 2022   2021", "Balance as of June 30, 2020   $ 16   $ 5,480"). A page number stands alone on
   * its line, or beside words ("Annual Report   54"), never beside other figures.
   */
  private static boolean numberAmongNumbers(Line l, List<Line> lines) {
    boolean bare = MARGIN_FIGURE.matcher(l.text().strip()).matches();
    int numbers = 0;
    for (Line o : lines) {
      if (o != l && Math.abs(o.baseline() - l.baseline()) <= Math.max(2, 0.3f * l.size())
          && MARGIN_FIGURE.matcher(o.text().strip()).matches()) {
        numbers++;
      }
    }
    return numbers >= (bare ? 1 : 2);
  }

  /** Pairs each table and picture with the caption block just above or below it. */
  private static Map<Unit, Block> attachCaptions(List<Unit> units, List<Block> blocks) {
    Map<Unit, Block> captions = new HashMap<>();
    Set<Block> used = new HashSet<>();
    for (Unit u : units) {
      if (u instanceof Block) {
        continue;
      }
      String kind = u instanceof Table ? "tab" : "fig";
      Block best = null;
      float bestDistance = Float.MAX_VALUE;
      for (Block b : blocks) {
        String text = text(b.lines());
        if (used.contains(b) || !PdfLayout.CAPTION.matcher(text).matches()) {
          continue;
        }
        boolean sameKind = text.toLowerCase(Locale.ROOT).startsWith(kind)
            || (kind.equals("fig") && text.toLowerCase(Locale.ROOT).startsWith("plate"));
        float overlap = Math.min(u.box().x1(), b.box().x1()) - Math.max(u.box().x0(), b.box().x0());
        float distance = Math.max(0, Math.max(b.box().top() - u.box().bottom(),
            u.box().top() - b.box().bottom()));
        if (!sameKind || overlap <= 0 || distance > 40) {
          continue;
        }
        if (distance < bestDistance) {
          best = b;
          bestDistance = distance;
        }
      }
      if (best != null) {
        captions.put(u, best);
        used.add(best);
      }
    }
    return captions;
  }

  private static String label(Block b, float bodySize, boolean mayBeTitle, Page page) {
    String text = text(b.lines());
    if (PdfLayout.CAPTION.matcher(text).matches()) {
      return "caption";
    }
    if (b.lines().get(0).rotated()) {
      return "text"; // margin notes and axis labels, whatever their size
    }
    float size = 0;
    boolean emphasised = true;
    for (Line l : b.lines()) {
      size = Math.max(size, l.size());
      emphasised &= l.emphasised();
    }
    boolean shortText = text.length() <= 150 && text.split("\\s+").length <= 20;
    boolean startsWell = Character.isLetterOrDigit(text.codePointAt(0))
        || SECTION_NUMBER.matcher(text).matches();
    if (mayBeTitle && size >= 1.4f * bodySize && b.lines().size() <= 4 && text.length() <= 250
        && b.box().top() < 0.4f * page.height()) {
      return "title";
    }
    if (b.lines().size() <= 2 && shortText && startsWell
        && !TRAILING_PUNCTUATION.matcher(text).matches()
        && (size >= bodySize + 0.9f || emphasised)) {
      return "section_header";
    }
    if (PdfLayout.LIST_MARKER.matcher(text).matches()) {
      return "list_item";
    }
    return "text";
  }

  /** A block's text: lines joined with spaces, a hyphen at a line end joining the word halves. */
  static String text(List<Line> lines) {
    StringBuilder sb = new StringBuilder();
    for (Line l : lines) {
      String t = l.text();
      if (!sb.isEmpty()) {
        int n = sb.length();
        if (sb.charAt(n - 1) == '-' && n >= 2 && Character.isLowerCase(sb.charAt(n - 2))
            && !t.isEmpty() && Character.isLowerCase(t.charAt(0))) {
          sb.setLength(n - 1);
        } else if (!t.isEmpty() && PdfText.joinsWithoutSpace(sb.codePointBefore(n), t.codePointAt(0))) {
          // A line break inside Chinese or Japanese text is no word break.
        } else {
          sb.append(' ');
        }
      }
      sb.append(t);
    }
    return sb.toString();
  }

  /** Collects items, numbering self_refs per kind in order as DoclingDocument does. */
  private static final class PdfItems {
    final List<DocItem> list = new ArrayList<>();
    final Map<Integer, Float> headerSizes = new HashMap<>();
    /** Depth of a header's dotted numbering ("2.3" is 2), for headers numbered so. */
    final Map<Integer, Integer> headerDepths = new HashMap<>();
    /** Each table's cells by its position, for joining a table continued on the next page. */
    final Map<Integer, List<List<String>>> grids = new HashMap<>();
    final IngestBudget budget;
    int texts;
    int tables;
    int pictures;

    PdfItems(IngestBudget budget) {
      this.budget = budget;
    }

    void text(String label, String text, List<Integer> pages, int level, int depth) {
      if (!text.isBlank()) {
        budget.item(text);
        list.add(new DocItem(list.size(), "#/texts/" + texts++, label, text.strip(), pages, level,
            depth));
      }
    }

    /** A section header, its level settled by {@link #withHeadingLevels} once all are known. */
    void header(String text, List<Integer> pages, float size) {
      if (!text.isBlank()) {
        java.util.regex.Matcher m = DOTTED_NUMBER.matcher(text.strip());
        if (m.lookingAt()) {
          headerDepths.put(list.size(), m.group(1).split("\\.").length);
        }
        headerSizes.put(list.size(), size);
        text("section_header", text, pages, 1, 0);
      }
    }

    /**
     * Levels by font size when the headers come in two or three clearly distinct sizes (larger is
     * higher); otherwise every header stays at level 1, as docs/CONTRACT.md allows.
     */
    List<DocItem> withHeadingLevels() {
      if (headerDepths.values().stream().anyMatch(d -> d >= 2)) {
        return withNumberedLevels();
      }
      List<Float> sizes = new ArrayList<>(new java.util.TreeSet<>(headerSizes.values()));
      java.util.Collections.reverse(sizes);
      List<Float> clusters = new ArrayList<>();
      for (float size : sizes) {
        if (clusters.isEmpty() || clusters.get(clusters.size() - 1) - size > 1f) {
          clusters.add(size);
        }
      }
      if (clusters.size() < 2 || clusters.size() > 3) {
        return list;
      }
      List<DocItem> out = new ArrayList<>(list.size());
      for (DocItem item : list) {
        Float size = headerSizes.get(item.position());
        int level = 1;
        if (size != null) {
          for (int c = 0; c < clusters.size(); c++) {
            if (size <= clusters.get(c) + 0.01f) {
              level = c + 1;
            }
          }
        }
        out.add(size == null ? item : new DocItem(item.position(), item.selfRef(), item.label(),
            item.text(), item.pageNumbers(), level, item.treeDepth()));
      }
      return out;
    }

    /**
     * Levels from the numbering when the document numbers its sections in depth ("2", "2.1",
     * "2.1.3"): the depth is the level, and an unnumbered header is level 1.
     */
    private List<DocItem> withNumberedLevels() {
      List<DocItem> out = new ArrayList<>(list.size());
      for (DocItem item : list) {
        Integer depth = headerDepths.get(item.position());
        out.add(!item.label().equals("section_header") ? item : new DocItem(item.position(),
            item.selfRef(), item.label(), item.text(), item.pageNumbers(),
            depth == null ? 1 : Math.min(6, depth), item.treeDepth()));
      }
      return out;
    }

    void table(List<List<String>> grid, List<Integer> pages) {
      String markdown = TableGrid.markdown(budget, grid);
      if (!markdown.isEmpty()) {
        budget.item(markdown);
        grids.put(list.size(), grid);
        list.add(new DocItem(list.size(), "#/tables/" + tables++, "table", markdown, pages, 0, 0));
      }
    }

    void picture(String caption, List<Integer> pages) {
      budget.item(caption);
      list.add(new DocItem(list.size(), "#/pictures/" + pictures++, "picture", caption, pages, 0,
          0));
    }
  }
}
