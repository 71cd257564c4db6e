package dev.quarry.ingest;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.PDPage;
import org.apache.pdfbox.pdmodel.PDPageContentStream;
import org.apache.pdfbox.pdmodel.common.PDRectangle;
import org.apache.pdfbox.pdmodel.font.PDFont;
import org.apache.pdfbox.pdmodel.font.PDType0Font;
import org.apache.pdfbox.pdmodel.font.PDType1Font;
import org.apache.pdfbox.pdmodel.font.Standard14Fonts.FontName;
import org.apache.pdfbox.pdmodel.graphics.image.LosslessFactory;
import org.apache.pdfbox.pdmodel.graphics.image.PDImageXObject;
import org.apache.pdfbox.util.Matrix;

/**
 * Writes small PDFs for tests with PDFBox and the standard 14 fonts. Positions are given top-down
 * (y from the page's top edge, to the text's baseline) on US Letter pages, the way one reads a
 * page, and converted to PDF's bottom-up space here.
 */
final class PdfFixture implements AutoCloseable {
  static final PDType1Font REGULAR = new PDType1Font(FontName.TIMES_ROMAN);
  static final PDType1Font BOLD = new PDType1Font(FontName.HELVETICA_BOLD);
  static final PDType1Font SANS = new PDType1Font(FontName.HELVETICA);
  static final PDType1Font MONO = new PDType1Font(FontName.COURIER);
  static final float WIDTH = PDRectangle.LETTER.getWidth();
  static final float HEIGHT = PDRectangle.LETTER.getHeight();

  private final PDDocument doc = new PDDocument();
  private PDPage page;
  private PDPageContentStream content;
  private PDImageXObject xobject;
  private int turn;

  PdfFixture page() throws IOException {
    closePage();
    page = new PDPage(PDRectangle.LETTER);
    turn = 0;
    doc.addPage(page);
    content = new PDPageContentStream(doc, page);
    return this;
  }

  /** Turns the current page for display by {@code degrees}, as a /Rotate entry does. */
  PdfFixture rotatePage(int degrees) {
    page.setRotation(degrees);
    return this;
  }

  /**
   * From now on on this page, text positions are given on the page turned by {@code degrees}
   * anticlockwise (a landscape page is turned by 90 or 270) and drawn so that it reads upright
   * there, the way landscape pages of a portrait document are often written.
   */
  PdfFixture turn(int degrees) {
    turn = degrees;
    return this;
  }

  PdfFixture text(float x, float baseline, PDFont font, float size, String text)
      throws IOException {
    content.beginText();
    content.setFont(font, size);
    float px = x;
    float py = HEIGHT - baseline;
    switch (turn) {
      case 90 -> { px = baseline; py = x; }
      case 180 -> { px = WIDTH - x; py = baseline; }
      case 270 -> { px = WIDTH - baseline; py = HEIGHT - x; }
      default -> { }
    }
    content.setTextMatrix(Matrix.getRotateInstance(Math.toRadians(turn), px, py));
    content.showText(text);
    content.endText();
    return this;
  }

  /** Lines of body text at a fixed pitch; returns the baseline after the last one. */
  float lines(float x, float baseline, PDFont font, float size, float pitch,
      String... lines) throws IOException {
    for (String l : lines) {
      text(x, baseline, font, size, l);
      baseline += pitch;
    }
    return baseline;
  }

  /**
   * A TrueType font embedded in this document (for scripts the standard 14 fonts lack). PDFBox
   * draws a string's characters left to right as given: right-to-left text is passed in visual
   * order, as PDF writers lay it out.
   */
  PDFont trueType(java.nio.file.Path ttf) throws IOException {
    return PDType0Font.load(doc, ttf.toFile());
  }

  /** A horizontal rule from x0 to x1 at y (top-down). */
  PdfFixture rule(float x0, float x1, float y) throws IOException {
    content.moveTo(x0, HEIGHT - y);
    content.lineTo(x1, HEIGHT - y);
    content.stroke();
    return this;
  }

  /** A vertical rule at x from top to bottom (top-down). */
  PdfFixture verticalRule(float x, float top, float bottom) throws IOException {
    content.moveTo(x, HEIGHT - top);
    content.lineTo(x, HEIGHT - bottom);
    content.stroke();
    return this;
  }

  /** Text ending at {@code right}: figures set flush right in their column. */
  PdfFixture rightAligned(float right, float baseline, PDFont font, float size, String text)
      throws IOException {
    return text(right - font.getStringWidth(text) / 1000 * size, baseline, font, size, text);
  }

  /** Text turned 90° anticlockwise, reading upwards from (x, baseline). */
  PdfFixture rotatedText(float x, float baseline, PDType1Font font, float size, String text)
      throws IOException {
    content.beginText();
    content.setFont(font, size);
    content.setTextMatrix(Matrix.getRotateInstance(Math.PI / 2, x, HEIGHT - baseline));
    content.showText(text);
    content.endText();
    return this;
  }

  /** A grey image filling the box whose top-left corner is (x, top). */
  PdfFixture image(float x, float top, float width, float height) throws IOException {
    content.drawImage(xobject(), x, HEIGHT - top - height, width, height);
    return this;
  }

  /** An image drawn larger than the clipping rectangle that shows only part of it. */
  PdfFixture clippedImage(float clipX, float clipTop, float clipWidth, float clipHeight,
      float x, float top, float width, float height) throws IOException {
    content.saveGraphicsState();
    content.addRect(clipX, HEIGHT - clipTop - clipHeight, clipWidth, clipHeight);
    content.clip();
    image(x, top, width, height);
    content.restoreGraphicsState();
    return this;
  }

  /** The page covered by square tiles of one image, as some scanners write a page. */
  PdfFixture tiles(float side) throws IOException {
    for (float y = 0; y < HEIGHT; y += side) {
      for (float x = 0; x < WIDTH; x += side) {
        image(x, y, side, side);
      }
    }
    return this;
  }

  private PDImageXObject xobject() throws IOException {
    if (xobject == null) {
      BufferedImage img = new BufferedImage(16, 16, BufferedImage.TYPE_INT_RGB);
      for (int i = 0; i < 16; i++) {
        for (int j = 0; j < 16; j++) {
          img.setRGB(i, j, (i * 16 + j) * 0x010101);
        }
      }
      xobject = LosslessFactory.createFromImage(doc, img);
    }
    return xobject;
  }

  byte[] bytes() throws IOException {
    closePage();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    doc.save(out);
    return out.toByteArray();
  }

  /**
   * {@code words} copies of {@code word} on one line, {@code step} points apart, drawn with
   * horizontal scaling {@code scale} percent (PDF's Tz): glyphs squeezed to almost no width.
   */
  PdfFixture squeezed(float x, float baseline, PDFont font, float size, float scale, String word,
      float step, int words) throws IOException {
    content.beginText();
    content.setFont(font, size);
    content.setHorizontalScaling(scale);
    for (int i = 0; i < words; i++) {
      content.setTextMatrix(Matrix.getTranslateInstance(x + i * step, HEIGHT - baseline));
      content.showText(word);
    }
    content.setHorizontalScaling(100);
    content.endText();
    return this;
  }

  /** The items the converter makes of this document. */
  java.util.List<dev.quarry.store.DocItem> items() throws Exception {
    return new PdfConverter().convert("fixture.pdf", bytes()).items();
  }

  /** The items the converter makes of a PDF in src/test/resources/pdf (see its README). */
  static java.util.List<dev.quarry.store.DocItem> resourceItems(String name) throws Exception {
    try (java.io.InputStream in = PdfFixture.class.getResourceAsStream("/pdf/" + name)) {
      return new PdfConverter().convert(name, in.readAllBytes()).items();
    }
  }

  static java.util.List<dev.quarry.store.DocItem> labelled(java.util.List<dev.quarry.store.DocItem> items,
      String label) {
    return items.stream().filter(i -> i.label().equals(label)).toList();
  }

  private void closePage() throws IOException {
    if (content != null) {
      content.close();
      content = null;
    }
  }

  @Override
  public void close() throws IOException {
    closePage();
    doc.close();
  }
}
