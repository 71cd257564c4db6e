package dev.quarry.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.store.DocItem;
import dev.quarry.support.SharedData;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.StringLength;
import org.apache.pdfbox.Loader;
import org.apache.pdfbox.pdmodel.PDDocument;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Whose filing, and for when: read off the first pages of the ten real filings in
 * {@code shared/data/filings} (converted as ingest converts them), and nothing at all for the
 * papers, manuals and pages of {@code shared/data/docling} or for prose that only talks about
 * filings.
 */
@DisplayName("A filing's company, form and period come from its own first pages; other documents get none")
class FilingIdentityTest {
  private static final Converters CONVERTERS = new Converters(64L << 20);

  /** The first pages of a PDF, converted; the rest is cut off, as it plays no part. */
  private static List<DocItem> firstPages(Path pdf) throws Exception {
    try (PDDocument doc = Loader.loadPDF(Files.readAllBytes(pdf))) {
      doc.setAllSecurityToBeRemoved(true); // some filings carry an empty-password encryption
      for (int p = doc.getNumberOfPages(); p > FilingIdentity.PAGES + 1; p--) {
        doc.removePage(p - 1);
      }
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      doc.save(out);
      return new PdfConverter().convert(pdf.getFileName().toString(), out.toByteArray()).items();
    }
  }

  private static Optional<FilingIdentity> of(String filing) throws Exception {
    return FilingIdentity.find(firstPages(SharedData.path("filings/pdfs/" + filing + ".pdf")));
  }

  @ParameterizedTest(name = "{0}")
  @DisplayName("each real filing: registrant or issuer, form, period, fiscal year")
  @CsvSource(delimiter = ';', nullValues = "-", value = {
      "ADOBE_2022_10K;ADOBE INC.;Form 10-K;fiscal year ended December 2, 2022;FY2022",
      "AMCOR_2023_10K;AMCOR PLC;Form 10-K;fiscal year ended June 30, 2023;FY2023",
      "AMERICANEXPRESS_2022_10K;American Express Company;Form 10-K;fiscal year ended December 31, 2022;FY2022",
      // the state of incorporation sits between the name and the registrant line
      "BOEING_2022_10K;THE BOEING COMPANY;Form 10-K;fiscal year ended December 31, 2022;FY2022",
      "JOHNSON_JOHNSON_2023_8K_dated-2023-08-30;Johnson & Johnson;Form 8-K;report dated August 30, 2023;-",
      "PEPSICO_2022_10K;PepsiCo, Inc.;Form 10-K;fiscal year ended December 31, 2022;FY2022",
      "Pfizer_2023Q2_10Q;PFIZER INC.;Form 10-Q;quarterly period ended July 2, 2023;-",
      "VERIZON_2022_10K;Verizon Communications Inc.;Form 10-K;fiscal year ended December 31, 2022;FY2022",
      // earnings releases: the issuer by its ticker, the period its results cover
      "MGMRESORTS_2022Q4_EARNINGS;MGM Resorts International;-;quarter and year ended December 31, 2022;FY2022",
  })
  void realFilings(String filing, String company, String form, String period, String fiscalYear) throws Exception {
    FilingIdentity id = of(filing).orElseThrow();
    assertThat(id).isEqualTo(new FilingIdentity(company, form, period, fiscalYear));
  }

  @Test
  @DisplayName("a retailer's year that ends in January is the fiscal year it ends in, as FinanceBench names it")
  void yearEndingInJanuary() throws Exception {
    FilingIdentity ulta = of("ULTABEAUTY_2023Q4_EARNINGS").orElseThrow();
    assertThat(ulta.company()).isEqualTo("Ulta Beauty, Inc.");
    assertThat(ulta.period()).endsWith("ended January 28, 2023");
    assertThat(ulta.fiscalYear()).isEqualTo("FY2023");
    assertThat(ulta.text()).isEqualTo("Ulta Beauty, Inc. | " + ulta.period() + " | FY2023");
  }

  static Stream<Path> otherDocuments() throws Exception {
    try (Stream<Path> files = Files.walk(SharedData.path("docling"))) {
      return files.filter(p -> p.toString().matches(".*\\.(pdf|docx|html)$")
          || p.toString().matches(".*/md/[^/]*\\.md$")).sorted().toList().stream();
    }
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("otherDocuments")
  @DisplayName("papers, manuals, reports and web pages that are not filings get no identity")
  void otherDocumentsGetNone(Path file) throws Exception {
    String name = file.getFileName().toString();
    byte[] bytes = Files.readAllBytes(file);
    List<DocItem> items = name.endsWith(".pdf") ? firstPages(file)
        : CONVERTERS.convertClean(CONVERTERS.detect(name, null, bytes), name, bytes).document().items();
    assertThat(items).isNotEmpty();
    assertThat(FilingIdentity.find(items)).isEmpty();
  }

  private static List<DocItem> text(String body) throws Exception {
    return CONVERTERS.convertClean(SourceType.TEXT, "note.txt", body.getBytes(StandardCharsets.UTF_8))
        .document().items();
  }

  @Test
  @DisplayName("prose that cites filings, a fiscal year or a registrant names no company")
  void proseAboutFilings() throws Exception {
    assertThat(FilingIdentity.find(text("""
        Data and method

        We read each firm's Form 10-K for the fiscal year ended December 31, 2019 and matched the
        exact name of the registrant to the CRSP tape (exact name of registrant as specified in its
        charter, where the two differ). Returns for the quarter ended March 31, 2020
        were taken from Compustat.""")))
        .isEmpty();
    assertThat(FilingIdentity.find(text("Minutes of the board meeting\n\nFor the year ended June 30, 2021 "
        + "the society raised 1,200 pounds."))).isEmpty();
  }

  @Test
  @DisplayName("a plain-text cover page is read as a PDF's is; the name may share the registrant line")
  void plainTextCover() throws Exception {
    FilingIdentity id = FilingIdentity.find(text("""
        UNITED STATES SECURITIES AND EXCHANGE COMMISSION

        FORM 10-Q

        For the quarterly period ended SEPTEMBER 30 , 2024

        Initech Corporation (Exact name of registrant as specified in its charter)

        Delaware (State or other jurisdiction of incorporation)""")).orElseThrow();
    assertThat(id.text()).isEqualTo("Initech Corporation | Form 10-Q | quarterly period ended September 30, 2024");
  }

  @Property(tries = 200)
  @Label("text without a registrant line, a ticker or a form line never gets an identity")
  void arbitraryTextGetsNone(@ForAll @StringLength(max = 400) String noise) throws Exception {
    String body = "Report\n\n" + noise.replaceAll("(?i)registrant|form|nyse|nasdaq|tsx|lse|asx|otc", "x")
        + "\n\nFor the fiscal year ended December 31, 2022";
    assertThat(FilingIdentity.find(text(body.replace('\u0000', ' ')))).isEmpty();
  }
}
