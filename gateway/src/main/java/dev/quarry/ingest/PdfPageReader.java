package dev.quarry.ingest;

import java.awt.geom.Point2D;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import org.apache.pdfbox.contentstream.PDFGraphicsStreamEngine;
import org.apache.pdfbox.contentstream.operator.Operator;
import org.apache.pdfbox.cos.COSBase;
import org.apache.pdfbox.cos.COSName;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.PDPage;
import org.apache.pdfbox.pdmodel.common.PDRectangle;
import org.apache.pdfbox.pdmodel.font.PDFont;
import org.apache.pdfbox.pdmodel.font.PDFontDescriptor;
import org.apache.pdfbox.pdmodel.graphics.image.PDImage;
import org.apache.pdfbox.text.PDFTextStripper;
import org.apache.pdfbox.text.TextPosition;
import org.apache.pdfbox.util.Matrix;

/**
 * Reads what layout analysis needs from one page: glyphs with their boxes and fonts, axis-aligned
 * ruling lines, and image boxes. Everything is in top-down page coordinates (y grows downwards from
 * the crop box's top edge), the way PDFBox reports text. Each kind is capped per page so that a
 * pathological content stream costs bounded memory.
 */
final class PdfPageReader {
  static final int MAX_GLYPHS_PER_PAGE = 200_000;
  static final int MAX_RULINGS_PER_PAGE = 20_000;
  static final int MAX_IMAGES_PER_PAGE = 2_000;

  /**
   * What a glyph kept costs until the document is laid out, the lines and words made of it
   * included: the filings' PDFs held about 100 bytes a glyph at their peak (ADOBE's 10-K: 32 MB
   * for 314,603 glyphs, its items included). A page's glyphs, rulings and images are charged to the
   * conversion's budget as they are kept, so the caps per page cannot add up over 2,000 pages that
   * draw one shared stream.
   */
  static final int GLYPH_BYTES = 100;
  /** What a ruling or an image box kept costs. */
  static final int SHAPE_BYTES = 64;

  private static final Pattern BOLD =
      Pattern.compile("bold|black|heavy|semibold|demibold|cmbx|sfbx|-bd|,bd", Pattern.CASE_INSENSITIVE);
  private static final Pattern ITALIC =
      Pattern.compile("italic|oblique|cmti|sfti|cmsl|sfsl|-it\\b", Pattern.CASE_INSENSITIVE);

  /** Fixed-pitch font families, by name (a descriptor's fixed-pitch flag is often missing). */
  private static final Pattern MONO = Pattern.compile(
      "mono|courier|consol|menlo|typewriter|cmtt|sfmono|inconsolata|lucidaconsole|fixedsys",
      Pattern.CASE_INSENSITIVE);

  /**
   * One glyph (or ligature) of text. Coordinates run along the text's own direction, so turned
   * text still forms lines; {@code onPage} is where the glyph sits in the page's frame, null when
   * it runs in the frame's direction. {@code seq} counts the page's glyphs in drawing order, and
   * {@code spaceBefore} says that a space was drawn between this glyph and the one before.
   */
  record Glyph(String text, float x0, float x1, float top, float baseline, float size,
      boolean bold, boolean italic, boolean mono, int direction, PdfRect onPage, int seq,
      boolean spaceBefore) {}

  /** A thin horizontal or vertical line: at {@code pos} (y or x), from {@code from} to {@code to}. */
  record Ruling(boolean horizontal, float pos, float from, float to) {}

  /** What one page holds. */
  record Page(int number, float width, float height, List<Glyph> glyphs, List<Ruling> rulings,
      List<PdfRect> images, int undecodable) {}

  /** The operator that begins an inline image (its data follows in the content stream). */
  private static final String INLINE_IMAGE = "BI";

  private PdfPageReader() {}

  /**
   * The most content-stream operators one page may run, its forms and patterns included, in each
   * of the two passes over it: a dense page of a filing runs tens of thousands. A few kilobytes of
   * forms that each draw the next one ten times run billions.
   */
  static final long MAX_OPERATORS_PER_PAGE = 1_000_000;

  /** A page that runs more operators than {@link #MAX_OPERATORS_PER_PAGE}, or past the deadline. */
  static final class PageTooComplex extends RuntimeException {
    PageTooComplex(String message) {
      super(message, null, false, false);
    }
  }

  /** Counts a pass's operators; checks the conversion's deadline every 4,096 of them. */
  private static final class Budget {
    private final long deadlineMillis;
    private final IngestBudget ingest;
    private long operators;

    Budget(long deadlineMillis, IngestBudget ingest) {
      this.deadlineMillis = deadlineMillis;
      this.ingest = ingest;
    }

    void tick() {
      operators++;
      ingest.tick();
      if (operators > MAX_OPERATORS_PER_PAGE) {
        throw new PageTooComplex("runs more than " + MAX_OPERATORS_PER_PAGE + " drawing operators");
      }
      if ((operators & 4095) == 0 && System.currentTimeMillis() > deadlineMillis) {
        throw new PageTooComplex("was still being read at the conversion's deadline");
      }
    }
  }

  /** {@link #read(PDDocument, int, long, IngestBudget)} without a deadline or a budget (the caps still hold). */
  static Page read(PDDocument doc, int pageIndex) throws IOException {
    return read(doc, pageIndex, Long.MAX_VALUE);
  }

  /** {@link #read(PDDocument, int, long, IngestBudget)} under a budget of the default limits. */
  static Page read(PDDocument doc, int pageIndex, long deadlineMillis) throws IOException {
    return read(doc, pageIndex, deadlineMillis, IngestBudget.of("page", Long.MAX_VALUE / 1024));
  }

  /**
   * The glyphs, rulings and images of one page.
   *
   * @throws PageTooComplex when the page runs more operators than a page may, or past {@code
   *     deadlineMillis} (checked within the page, not only between pages)
   */
  static Page read(PDDocument doc, int pageIndex, long deadlineMillis, IngestBudget budget)
      throws IOException {
    PDPage page = doc.getPage(pageIndex);
    PDRectangle crop = page.getCropBox();
    GlyphCollector glyphs = new GlyphCollector(crop.getHeight(), new Budget(deadlineMillis, budget), budget);
    glyphs.setStartPage(pageIndex + 1);
    glyphs.setEndPage(pageIndex + 1);
    glyphs.getText(doc);
    GraphicsCollector graphics = new GraphicsCollector(page, crop, new Budget(deadlineMillis, budget));
    graphics.processPage(page);
    budget.memory((long) SHAPE_BYTES * (graphics.rulings.size() + graphics.images.size()),
        "page " + (pageIndex + 1) + "'s rulings and images");
    // A landscape page is often upright content turned on a portrait sheet: the direction most
    // text runs in becomes the page's frame, and everything else is turned into it.
    Frame frame = new Frame(glyphs.dominantDirection(), crop.getWidth(), crop.getHeight());
    List<Glyph> placed = new ArrayList<>(glyphs.glyphs.size());
    for (int i = 0; i < glyphs.glyphs.size(); i++) {
      Glyph g = glyphs.glyphs.get(i);
      if (g.direction() == frame.direction()) {
        placed.add(g);
      } else {
        float[] o = glyphs.origins.get(i);
        float reach = Math.max(g.size(), g.x1() - g.x0());
        // Rough, but enough to place a line of other direction among the frame's own lines.
        PdfRect onPage = frame.map(new PdfRect(o[0] - reach, o[1] - reach, o[0] + reach,
            o[1] + reach));
        placed.add(new Glyph(g.text(), g.x0(), g.x1(), g.top(), g.baseline(), g.size(), g.bold(),
            g.italic(), g.mono(), g.direction(), onPage, g.seq(), g.spaceBefore()));
      }
    }
    List<Ruling> rulings = new ArrayList<>(graphics.rulings.size());
    for (Ruling r : graphics.rulings) {
      rulings.add(frame.map(r));
    }
    List<PdfRect> images = new ArrayList<>(graphics.images.size());
    for (PdfRect r : graphics.images) {
      images.add(frame.map(r));
    }
    return new Page(pageIndex + 1, frame.width(), frame.height(), placed, rulings, images,
        glyphs.undecodable);
  }

  /**
   * Page space (top-down, {@code w} × {@code h}) turned so that text running in {@code direction}
   * degrees reads left to right, matching PDFBox's direction-adjusted glyph coordinates.
   */
  record Frame(int direction, float w, float h) {
    float width() {
      return direction == 90 || direction == 270 ? h : w;
    }

    float height() {
      return direction == 90 || direction == 270 ? w : h;
    }

    float[] map(float x, float y) {
      return switch (direction) {
        case 90 -> new float[] {h - y, x};
        case 180 -> new float[] {w - x, h - y};
        case 270 -> new float[] {y, w - x};
        default -> new float[] {x, y};
      };
    }

    PdfRect map(PdfRect r) {
      float[] a = map(r.x0(), r.top());
      float[] b = map(r.x1(), r.bottom());
      return new PdfRect(Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.max(a[0], b[0]),
          Math.max(a[1], b[1]));
    }

    Ruling map(Ruling r) {
      PdfRect box = map(r.horizontal() ? new PdfRect(r.from(), r.pos(), r.to(), r.pos())
          : new PdfRect(r.pos(), r.from(), r.pos(), r.to()));
      boolean horizontal = box.height() < box.width();
      return horizontal ? new Ruling(true, box.top(), box.x0(), box.x1())
          : new Ruling(false, box.x0(), box.top(), box.bottom());
    }
  }

  private static final class GlyphCollector extends PDFTextStripper {
    final List<Glyph> glyphs = new ArrayList<>();
    final List<float[]> origins = new ArrayList<>();
    final java.util.Map<Integer, Integer> directions = new java.util.HashMap<>();
    /** Glyphs dropped because their font maps them to no character, or to no real one. */
    int undecodable;
    private boolean pendingSpace;
    private final float pageHeight;
    private final Budget budget;
    private final IngestBudget ingest;

    GlyphCollector(float pageHeight, Budget budget, IngestBudget ingest) throws IOException {
      this.pageHeight = pageHeight;
      this.budget = budget;
      this.ingest = ingest;
      setSortByPosition(false);
      setShouldSeparateByBeads(false);
      setSuppressDuplicateOverlappingText(true);
    }

    @Override
    protected void processOperator(Operator operator, List<COSBase> operands) throws IOException {
      budget.tick();
      if (INLINE_IMAGE.equals(operator.getName())) {
        return; // text only: an inline image's data is not decoded
      }
      super.processOperator(operator, operands);
    }

    @Override
    protected void processTextPosition(TextPosition text) {
      if (glyphs.size() >= MAX_GLYPHS_PER_PAGE) {
        return;
      }
      String unicode = text.getUnicode();
      if (unicode == null) {
        undecodable++; // the font maps this glyph to no character at all
        return;
      }
      if (unicode.isBlank()) {
        pendingSpace = true;
        return;
      }
      unicode = PdfText.decoded(unicode);
      if (unicode == null) {
        undecodable++;
        return;
      }
      // The glyph's height scale: PDFBox's own point size goes wrong for text turned by 180°.
      Matrix tm = text.getTextMatrix();
      float size = (float) Math.hypot(tm.getValue(1, 0), tm.getValue(1, 1));
      if (!(size > 0) || size > 500) {
        size = Math.max(1f, text.getHeightDir());
      }
      float baseline = text.getYDirAdj();
      float x0 = text.getXDirAdj();
      float x1 = x0 + Math.max(0f, text.getWidthDirAdj());
      PDFont font = text.getFont();
      String name = font == null || font.getName() == null ? "" : font.getName();
      PDFontDescriptor fd = font == null ? null : font.getFontDescriptor();
      boolean bold = BOLD.matcher(name).find()
          || (fd != null && (fd.isForceBold() || fd.getFontWeight() >= 600));
      boolean italic = ITALIC.matcher(name.toLowerCase(Locale.ROOT)).find()
          || (fd != null && fd.isItalic());
      boolean mono = MONO.matcher(name).find() || (fd != null && fd.isFixedPitch());
      int direction = Math.round(text.getDir()) % 360;
      ingest.memory(GLYPH_BYTES, "the PDF's glyphs");
      // The origin in unturned page space (the matrix is already relative to the crop box).
      origins.add(new float[] {tm.getTranslateX(), pageHeight - tm.getTranslateY()});
      directions.merge(direction, 1, Integer::sum);
      glyphs.add(new Glyph(unicode, x0, x1, baseline - size * 0.75f, baseline, size, bold,
          italic, mono, direction, null, glyphs.size(), pendingSpace));
      pendingSpace = false;
    }

    int dominantDirection() {
      return directions.entrySet().stream().max(java.util.Map.Entry.comparingByValue())
          .map(java.util.Map.Entry::getKey).orElse(0);
    }

    @Override
    protected void writePage() {
      // Layout is ours: PDFTextStripper only supplies the glyphs.
    }
  }

  private static final class GraphicsCollector extends PDFGraphicsStreamEngine {
    final List<Ruling> rulings = new ArrayList<>();
    final List<PdfRect> images = new ArrayList<>();
    private final PDRectangle crop;
    private final List<float[]> path = new ArrayList<>();
    private Point2D.Float current = new Point2D.Float();
    private Point2D.Float start = new Point2D.Float();
    private java.awt.geom.Rectangle2D.Float pathBounds;
    private boolean clipPending;

    private final Budget budget;

    GraphicsCollector(PDPage page, PDRectangle crop, Budget budget) {
      super(page);
      this.crop = crop;
      this.budget = budget;
    }

    @Override
    protected void processOperator(Operator operator, List<COSBase> operands) throws IOException {
      budget.tick();
      if (INLINE_IMAGE.equals(operator.getName())) {
        // Where the image goes is the current transformation's unit square; PDFBox would decode
        // its data whole first (without a bound), which layout never needs.
        if (operator.getImageData() != null && operator.getImageData().length > 0) {
          imageAt();
        }
        return;
      }
      super.processOperator(operator, operands);
    }

    private float x(double x) {
      return (float) (x - crop.getLowerLeftX());
    }

    private float y(double y) {
      return (float) (crop.getUpperRightY() - y);
    }

    @Override
    public void appendRectangle(Point2D p0, Point2D p1, Point2D p2, Point2D p3) {
      moveTo((float) p0.getX(), (float) p0.getY());
      lineTo((float) p1.getX(), (float) p1.getY());
      lineTo((float) p2.getX(), (float) p2.getY());
      lineTo((float) p3.getX(), (float) p3.getY());
      closePath();
    }

    @Override
    public void drawImage(PDImage image) {
      imageAt();
    }

    /** Keeps the box the current transformation maps the unit square to, as far as it is visible. */
    private void imageAt() {
      if (images.size() >= MAX_IMAGES_PER_PAGE) {
        return;
      }
      Matrix m = getGraphicsState().getCurrentTransformationMatrix();
      float minX = Float.MAX_VALUE, minY = Float.MAX_VALUE;
      float maxX = -Float.MAX_VALUE, maxY = -Float.MAX_VALUE;
      for (float[] corner : new float[][] {{0, 0}, {1, 0}, {0, 1}, {1, 1}}) {
        Point2D.Float p = m.transformPoint(corner[0], corner[1]);
        minX = Math.min(minX, x(p.x));
        maxX = Math.max(maxX, x(p.x));
        minY = Math.min(minY, y(p.y));
        maxY = Math.max(maxY, y(p.y));
      }
      PdfRect box = new PdfRect(minX, minY, maxX, maxY);
      // Figures often place a larger image behind a clipping path; only the visible part counts.
      java.awt.geom.Rectangle2D clip = getGraphicsState().getCurrentClippingPath().getBounds2D();
      PdfRect visible = new PdfRect(x(clip.getMinX()), y(clip.getMaxY()), x(clip.getMaxX()),
          y(clip.getMinY()));
      float x0 = Math.max(box.x0(), visible.x0()), x1 = Math.min(box.x1(), visible.x1());
      float top = Math.max(box.top(), visible.top()), bottom = Math.min(box.bottom(), visible.bottom());
      if (x1 > x0 && bottom > top) {
        images.add(new PdfRect(x0, top, x1, bottom));
      }
    }

    /**
     * PDFBox leaves clipping to the engine: the clip takes effect when the path ends. The path's
     * bounding box stands in for its shape, which is exact for the usual rectangular figure clip
     * and keeps a pathological path from costing area arithmetic.
     */
    @Override
    public void clip(int windingRule) {
      clipPending = true;
    }

    private void applyPendingClip() {
      if (clipPending && pathBounds != null) {
        getGraphicsState().intersectClippingPath(new java.awt.geom.Area(pathBounds));
      }
      clipPending = false;
      pathBounds = null;
    }

    private void extendBounds(float x, float y) {
      if (pathBounds == null) {
        pathBounds = new java.awt.geom.Rectangle2D.Float(x, y, 0, 0);
      } else {
        pathBounds.add(x, y);
      }
    }

    @Override
    public void moveTo(float x, float y) {
      extendBounds(x, y);
      current = new Point2D.Float(x, y);
      start = current;
    }

    @Override
    public void lineTo(float x, float y) {
      extendBounds(x, y);
      if (path.size() < MAX_RULINGS_PER_PAGE) {
        path.add(new float[] {current.x, current.y, x, y});
      }
      current = new Point2D.Float(x, y);
    }

    @Override
    public void curveTo(float x1, float y1, float x2, float y2, float x3, float y3) {
      // The control points bound the curve, so the box stays conservative.
      extendBounds(x1, y1);
      extendBounds(x2, y2);
      extendBounds(x3, y3);
      current = new Point2D.Float(x3, y3);
    }

    @Override
    public Point2D getCurrentPoint() {
      return current;
    }

    @Override
    public void closePath() {
      lineTo(start.x, start.y);
    }

    @Override
    public void endPath() {
      applyPendingClip();
      path.clear();
    }

    @Override
    public void strokePath() {
      keepRulings(false);
    }

    @Override
    public void fillPath(int windingRule) {
      keepRulings(true);
    }

    @Override
    public void fillAndStrokePath(int windingRule) {
      keepRulings(false);
    }

    @Override
    public void shadingFill(COSName shadingName) {}

    /**
     * Stroked axis-aligned segments are rulings; of a filled path only a thin box counts (a table
     * rule drawn as a filled rectangle), not a shaded cell background.
     */
    private void keepRulings(boolean filled) {
      if (filled) {
        float minX = Float.MAX_VALUE, minY = Float.MAX_VALUE;
        float maxX = -Float.MAX_VALUE, maxY = -Float.MAX_VALUE;
        for (float[] s : path) {
          minX = Math.min(minX, Math.min(s[0], s[2]));
          maxX = Math.max(maxX, Math.max(s[0], s[2]));
          minY = Math.min(minY, Math.min(s[1], s[3]));
          maxY = Math.max(maxY, Math.max(s[1], s[3]));
        }
        if (!path.isEmpty() && rulings.size() < MAX_RULINGS_PER_PAGE) {
          if (maxY - minY <= 3 && maxX - minX > 3) {
            rulings.add(new Ruling(true, y((minY + maxY) / 2), x(minX), x(maxX)));
          } else if (maxX - minX <= 3 && maxY - minY > 3) {
            rulings.add(new Ruling(false, x((minX + maxX) / 2), y(maxY), y(minY)));
          }
        }
      } else {
        keepSegments(3);
      }
      applyPendingClip();
      path.clear();
    }

    private void keepSegments(float minLength) {
      for (float[] s : path) {
          if (rulings.size() >= MAX_RULINGS_PER_PAGE) {
            break;
          }
          float dx = Math.abs(s[2] - s[0]);
          float dy = Math.abs(s[3] - s[1]);
          if (dy < 1 && dx > minLength) {
            rulings.add(new Ruling(true, y(s[1]), x(Math.min(s[0], s[2])),
                x(Math.max(s[0], s[2]))));
          } else if (dx < 1 && dy > minLength) {
            rulings.add(new Ruling(false, x(s[0]), y(Math.max(s[1], s[3])),
                y(Math.min(s[1], s[3]))));
          }
      }
    }
  }
}
