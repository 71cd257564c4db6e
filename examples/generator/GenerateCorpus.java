// Writes the binary documents of the example corpus (a PDF and a DOCX) from the text below, so that
// the committed files can be regenerated and reviewed as source. Run it with generate-corpus.sh.

import java.io.IOException;
import java.io.OutputStream;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Calendar;
import java.util.GregorianCalendar;
import java.util.List;
import java.util.TimeZone;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.apache.pdfbox.pdmodel.PDDocumentInformation;
import org.apache.pdfbox.pdmodel.PDPage;
import org.apache.pdfbox.pdmodel.PDPageContentStream;
import org.apache.pdfbox.pdmodel.common.PDRectangle;
import org.apache.pdfbox.pdmodel.font.PDType1Font;
import org.apache.pdfbox.pdmodel.font.Standard14Fonts;
import org.apache.poi.xwpf.usermodel.ParagraphAlignment;
import org.apache.poi.xwpf.usermodel.XWPFDocument;
import org.apache.poi.xwpf.usermodel.XWPFParagraph;
import org.apache.poi.xwpf.usermodel.XWPFStyle;
import org.apache.poi.xwpf.usermodel.XWPFStyles;
import org.apache.poi.xwpf.usermodel.XWPFTable;
import org.apache.poi.xwpf.usermodel.XWPFTableRow;
import org.openxmlformats.schemas.wordprocessingml.x2006.main.CTStyle;
import org.openxmlformats.schemas.wordprocessingml.x2006.main.STStyleType;

public class GenerateCorpus {
  /** A fixed date, so that regenerating gives the same document metadata. */
  private static final Calendar CREATED = new GregorianCalendar(2025, Calendar.MARCH, 14, 9, 0, 0);

  public static void main(String[] args) throws IOException {
    Path out = Path.of(args.length > 0 ? args[0] : "examples/corpus");
    Files.createDirectories(out);
    CREATED.setTimeZone(TimeZone.getTimeZone("UTC"));
    writeAnnualReport(out.resolve("annual-report-2024.pdf"));
    writeSafetyProcedures(out.resolve("safety-procedures.docx"));
    System.out.println("wrote " + out.resolve("annual-report-2024.pdf") + " and " + out.resolve("safety-procedures.docx"));
  }

  // ---------------------------------------------------------------- PDF: the 2024 annual report

  private static void writeAnnualReport(Path file) throws IOException {
    try (PDDocument doc = new PDDocument()) {
      PDDocumentInformation info = doc.getDocumentInformation();
      info.setTitle("Halvard Sound Ferries - Annual Report 2024");
      info.setAuthor("Halvard Sound Ferries");
      info.setCreationDate(CREATED);
      info.setModificationDate(CREATED);

      Pdf p1 = new Pdf(doc, 1);
      p1.title("Halvard Sound Ferries - Annual Report 2024");
      p1.heading("1. Summary");
      p1.paragraph("In 2024 Halvard Sound Ferries carried 412,860 passengers and 96,315 vehicles on its "
          + "three routes, 6.8 percent more passengers than in 2023. The summer season was the busiest "
          + "on record: the third quarter alone accounted for more than a third of all passengers.");
      p1.paragraph("The company ran 14,236 scheduled sailings. Reliability stayed high despite a stormy "
          + "winter, and the year closed with an operating result of 2.1 million euros, which the "
          + "board has set aside for the renewal of the fleet.");
      p1.heading("2. Traffic by route");
      p1.paragraph("The table below gives the passengers carried on each route in each quarter of 2024. "
          + "Skerry Point remains the busiest route because of its summer visitors; the Tollan route "
          + "grew fastest, by 11 percent, after the new morning sailing was added in April.");
      p1.table(new float[] {190, 62, 62, 62, 62, 70},
          List.of(
              List.of("Route", "Q1", "Q2", "Q3", "Q4", "Total"),
              List.of("Port Halvard - Marrow Isle", "21,480", "38,920", "52,310", "24,650", "137,360"),
              List.of("Port Halvard - Skerry Point", "30,115", "47,880", "61,905", "33,240", "173,140"),
              List.of("Marrow Isle - Tollan", "14,020", "27,465", "39,610", "21,265", "102,360"),
              List.of("All routes", "65,615", "114,265", "153,825", "79,155", "412,860")));
      p1.caption("Table 1: Passengers carried by route and quarter, 2024.");
      p1.close();

      Pdf p2 = new Pdf(doc, 2);
      p2.heading("3. Reliability");
      p2.paragraph("Of the 14,236 sailings in the timetable, 13,871 left within five minutes of the "
          + "advertised time (97.4 percent). 291 sailings were delayed and 74 were cancelled. Almost "
          + "all cancellations were caused by gales in January and February; eleven were caused by a "
          + "fault in the bow thruster of MV Tollan Wren in August, when MV Ardent took over the route.");
      p2.heading("4. Finances");
      p2.paragraph("Figures in thousands of euros. The public service contract with the county pays "
          + "for the early and late sailings that do not cover their own costs.");
      p2.table(new float[] {260, 110},
          List.of(
              List.of("Item", "EUR thousand"),
              List.of("Passenger tickets", "9,842"),
              List.of("Vehicle tickets", "4,317"),
              List.of("Freight", "1,126"),
              List.of("Public service contract", "3,600"),
              List.of("Total revenue", "18,885"),
              List.of("Fuel", "5,210"),
              List.of("Crew", "7,045"),
              List.of("Maintenance and dry-docking", "2,380"),
              List.of("Port fees", "1,190"),
              List.of("Other costs", "960"),
              List.of("Total costs", "16,785"),
              List.of("Operating result", "2,100")));
      p2.caption("Table 2: Revenue and costs, 2024.");
      p2.paragraph("Fuel was the cost that rose most, by 9 percent, although the vessels burned slightly "
          + "less fuel than in 2023 thanks to lower service speeds on the Skerry Point route.");
      p2.close();

      Pdf p3 = new Pdf(doc, 3);
      p3.heading("5. Outlook for 2025");
      p3.paragraph("The board has agreed the following priorities for 2025:");
      p3.bullet("Sign the building contract for MV Aurora, a battery-electric vessel for 250 passengers "
          + "and 32 cars that will replace MV Marrow Belle in 2027.");
      p3.bullet("Install a charging connection on the east quay at Port Halvard.");
      p3.bullet("Repair the linkspan at Skerry Point pier during the quiet winter months.");
      p3.bullet("Introduce an island resident card that replaces the paper ten-trip tickets.");
      p3.paragraph("Passenger numbers are expected to grow by a further 3 to 4 percent in 2025, with the "
          + "strongest growth again on the Tollan route.");
      p3.close();

      doc.save(file.toFile());
    }
  }

  /** One page laid out top to bottom, with a page number in the footer. */
  private static final class Pdf {
    private static final PDType1Font REGULAR = new PDType1Font(Standard14Fonts.FontName.HELVETICA);
    private static final PDType1Font BOLD = new PDType1Font(Standard14Fonts.FontName.HELVETICA_BOLD);
    private static final PDType1Font ITALIC = new PDType1Font(Standard14Fonts.FontName.HELVETICA_OBLIQUE);
    private static final float LEFT = 72;
    private static final float WIDTH = PDRectangle.A4.getWidth() - 2 * LEFT;

    private final PDPageContentStream cs;
    private float y;

    Pdf(PDDocument doc, int number) throws IOException {
      PDPage page = new PDPage(PDRectangle.A4);
      doc.addPage(page);
      cs = new PDPageContentStream(doc, page);
      y = PDRectangle.A4.getHeight() - 72;
      text(REGULAR, 9, PDRectangle.A4.getWidth() / 2 - 20, 40, "Page " + number + " of 3");
    }

    void title(String s) throws IOException {
      text(BOLD, 20, LEFT, y, s);
      y -= 36;
    }

    void heading(String s) throws IOException {
      y -= 6;
      text(BOLD, 14, LEFT, y, s);
      y -= 22;
    }

    void paragraph(String s) throws IOException {
      for (String line : wrap(s, REGULAR, 11, WIDTH)) {
        text(REGULAR, 11, LEFT, y, line);
        y -= 15;
      }
      y -= 8;
    }

    void bullet(String s) throws IOException {
      List<String> lines = wrap(s, REGULAR, 11, WIDTH - 16);
      text(REGULAR, 11, LEFT + 2, y, "\u2022");
      for (String line : lines) {
        text(REGULAR, 11, LEFT + 16, y, line);
        y -= 15;
      }
      y -= 4;
    }

    void caption(String s) throws IOException {
      text(ITALIC, 10, LEFT, y, s);
      y -= 24;
    }

    /** A ruled table; numbers are right-aligned so that columns read as columns. */
    void table(float[] widths, List<List<String>> rows) throws IOException {
      float rowHeight = 18;
      float total = 0;
      for (float w : widths) {
        total += w;
      }
      float top = y + 4;
      for (int r = 0; r < rows.size(); r++) {
        float x = LEFT;
        for (int c = 0; c < widths.length; c++) {
          String cell = rows.get(r).get(c);
          PDType1Font font = r == 0 || rows.get(r).get(0).startsWith("Total") || rows.get(r).get(0).startsWith("All")
              || rows.get(r).get(0).startsWith("Operating") ? BOLD : REGULAR;
          float textX = c == 0 ? x + 4 : x + widths[c] - 4 - font.getStringWidth(cell) / 1000 * 10;
          text(font, 10, textX, y - 9, cell);
          x += widths[c];
        }
        y -= rowHeight;
      }
      float bottom = y + 4;
      cs.setLineWidth(0.5f);
      for (int r = 0; r <= rows.size(); r++) {
        float lineY = top - r * rowHeight;
        cs.moveTo(LEFT, lineY);
        cs.lineTo(LEFT + total, lineY);
      }
      float x = LEFT;
      for (int c = 0; c <= widths.length; c++) {
        cs.moveTo(x, top);
        cs.lineTo(x, bottom);
        if (c < widths.length) {
          x += widths[c];
        }
      }
      cs.stroke();
      y -= 10;
    }

    void close() throws IOException {
      cs.close();
    }

    private void text(PDType1Font font, float size, float x, float atY, String s) throws IOException {
      cs.beginText();
      cs.setFont(font, size);
      cs.newLineAtOffset(x, atY);
      cs.showText(s);
      cs.endText();
    }

    private static List<String> wrap(String s, PDType1Font font, float size, float width) throws IOException {
      List<String> lines = new java.util.ArrayList<>();
      StringBuilder line = new StringBuilder();
      for (String word : s.split(" ")) {
        String candidate = line.isEmpty() ? word : line + " " + word;
        if (font.getStringWidth(candidate) / 1000 * size > width && !line.isEmpty()) {
          lines.add(line.toString());
          line = new StringBuilder(word);
        } else {
          line = new StringBuilder(candidate);
        }
      }
      if (!line.isEmpty()) {
        lines.add(line.toString());
      }
      return lines;
    }
  }

  // ---------------------------------------------------------------- DOCX: safety procedures

  private static void writeSafetyProcedures(Path file) throws IOException {
    try (XWPFDocument doc = new XWPFDocument()) {
      doc.getProperties().getCoreProperties().setTitle("Safety and Emergency Procedures");
      doc.getProperties().getCoreProperties().setCreator("Halvard Sound Ferries");
      doc.getProperties().getCoreProperties().setCreated(java.util.Optional.of(CREATED.getTime()));
      XWPFStyles styles = doc.createStyles();
      style(styles, "Title", "Title");
      style(styles, "Heading1", "heading 1");
      style(styles, "Heading2", "heading 2");
      style(styles, "ListNumber", "List Number");
      style(styles, "ListBullet", "List Bullet");

      para(doc, "Title", "Safety and Emergency Procedures");
      para(doc, null, "Halvard Sound Ferries. Applies to all vessels and all crew. Revision 7, March 2025.");

      para(doc, "Heading1", "1 Purpose");
      para(doc, null, "These procedures tell the crew what to do in the emergencies that are most likely on a "
          + "short sea crossing. The master may depart from them when the situation demands it, and must "
          + "record why in the deck log.");

      para(doc, "Heading1", "2 Person overboard");
      para(doc, null, "Anyone who sees a person fall into the water shouts \"Person overboard\" and the side, "
          + "and keeps pointing at the person until relieved. Then the crew act in this order:");
      para(doc, "ListNumber", "Throw the nearest lifebuoy with its light and smoke signal towards the person.");
      para(doc, "ListNumber", "The officer of the watch sounds three long blasts and turns the vessel towards the side the person fell from.");
      para(doc, "ListNumber", "The master sends a Mayday relay to the coastguard on VHF channel 16 and notes the position.");
      para(doc, "ListNumber", "The rescue boat crew muster at the rescue boat and launch it on the master's order.");
      para(doc, "ListNumber", "Once the person is on board, a first aider treats them for cold shock and hypothermia.");
      para(doc, null, "In the water a person loses strength quickly: in winter, sea temperatures around 6 degrees "
          + "Celsius make every minute count.");

      para(doc, "Heading1", "3 Fire");
      para(doc, "Heading2", "3.1 Fire on the car deck");
      para(doc, null, "A fire on the car deck is the most dangerous fire on a ro-ro ferry, because fuel and "
          + "batteries burn hot and the deck is open from end to end.");
      para(doc, "ListBullet", "Sound the general alarm and close the fire doors to the passenger decks.");
      para(doc, "ListBullet", "Start the drencher system for the section of the deck that is burning.");
      para(doc, "ListBullet", "Keep passengers away from the car deck and muster them at the muster stations.");
      para(doc, "ListBullet", "Fight the fire only in breathing apparatus and in teams of two.");
      para(doc, "Heading2", "3.2 Fire in the engine room");
      para(doc, null, "Stop the engines and the ventilation fans, close the fuel quick-closing valves and leave "
          + "the engine room. The master decides whether to release the fixed CO2 system, after a head count "
          + "confirms that nobody is left inside.");

      para(doc, "Heading1", "4 Drills");
      para(doc, null, "Every crew member takes part in the drills below. Drills are logged in the deck log "
          + "with the date, the names of those present and what went wrong.");
      XWPFTable table = doc.createTable(6, 3);
      String[][] drills = {
          {"Drill", "Frequency", "Minimum participants"},
          {"Person overboard", "Every 2 weeks", "4"},
          {"Fire on the car deck", "Every month", "All crew on watch"},
          {"Abandon ship and muster", "Every month", "All crew on watch"},
          {"Enclosed space entry", "Every 2 months", "3"},
          {"Steering gear failure", "Every 3 months", "2"},
      };
      for (int r = 0; r < drills.length; r++) {
        XWPFTableRow row = table.getRow(r);
        for (int c = 0; c < 3; c++) {
          row.getCell(c).setText(drills[r][c]);
        }
      }

      para(doc, "Heading1", "5 Weather limits");
      para(doc, null, "Sailings are suspended when the mean wind speed exceeds 30 knots on the Skerry Point "
          + "route and 35 knots on the other routes, or when the master judges that the vessel cannot berth "
          + "safely. The decision is made one hour before departure and posted at both quays.");
      para(doc, null, "When visibility is below 500 metres, the vessel sails only with two officers on the "
          + "bridge and the radar plotted continuously.");

      try (OutputStream os = Files.newOutputStream(file)) {
        doc.write(os);
      }
    }
  }

  private static void style(XWPFStyles styles, String id, String name) {
    CTStyle ct = CTStyle.Factory.newInstance();
    ct.setStyleId(id);
    ct.setType(STStyleType.PARAGRAPH);
    ct.addNewName().setVal(name);
    if (name.startsWith("heading")) {
      ct.addNewPPr().addNewOutlineLvl().setVal(BigInteger.valueOf(Integer.parseInt(name.substring(8)) - 1));
    }
    styles.addStyle(new XWPFStyle(ct, styles));
  }

  private static void para(XWPFDocument doc, String style, String text) {
    XWPFParagraph p = doc.createParagraph();
    if (style != null) {
      p.setStyle(style);
    }
    if ("Title".equals(style)) {
      p.setAlignment(ParagraphAlignment.CENTER);
    }
    p.createRun().setText(text);
  }
}
