package dev.quarry.ingest;

import dev.quarry.store.DocItem;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.StringJoiner;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Whose filing a document is, and for when, read off its own first pages: the cover page of an SEC
 * report names the registrant above "(Exact name of registrant as specified in its charter)", the
 * form ("FORM 10-K") and the period ("For the fiscal year ended December 2, 2022"); an 8-K gives
 * its "Date of report"; an earnings release names the company by its ticker ("MGM Resorts
 * International (NYSE: MGM)") and the period its results cover. A chunk deep inside a 10-K says
 * none of this, so it goes into every chunk's context, where BM25 and the embedding see it.
 *
 * <p>Only these conventions count, so that a paper, a manual or a letter gets nothing: a company
 * needs the registrant line or a ticker in parentheses, and a form or a period is only taken from a
 * document that has a company or a cover-page form line.
 *
 * @param company the registrant or issuer, as printed; null when none was found
 * @param form e.g. {@code Form 10-K}; null when none was found
 * @param period e.g. {@code fiscal year ended December 2, 2022}; null when none was found
 * @param fiscalYear e.g. {@code FY2022}: the year in which an annual period ends, as analysts and
 *     questions name it (Ulta's year ended January 28, 2023 is FY2023); null for other periods
 */
public record FilingIdentity(String company, String form, String period, String fiscalYear) {
  /** Cover pages are the first one or two; a table of contents may push a release's lead down. */
  static final int PAGES = 3;
  /** For sources without pages: about three pages' worth of lines. */
  static final int LINES_WITHOUT_PAGES = 150;
  /** How far above the registrant line its name may sit (the state of incorporation can be between). */
  private static final int REGISTRANT_LOOKBACK = 4;
  private static final int MAX_NAME_CHARS = 100;

  private static final String DATE = "((?:January|February|March|April|May|June|July|August|September"
      + "|October|November|December)\\s+\\d{1,2}\\s*,?\\s*(\\d{4}))";
  /** The cover page's caption, in its parentheses: prose that mentions a registrant is not one. */
  private static final Pattern REGISTRANT =
      Pattern.compile("\\(\\s*exact\\s+name\\s+of\\s+(?:the\\s+)?registrants?\\b", Pattern.CASE_INSENSITIVE);
  private static final Pattern FORM = Pattern.compile(
      "(?i)^form\\s+(10-K|10-Q|8-K|20-F|40-F|6-K|10-KT|10-QT|11-K|S-1|S-4|DEF\\s+14A)(/A)?$");
  private static final Pattern ANNUAL =
      Pattern.compile("(?i)\\bfor\\s+the\\s+(fiscal\\s+)?year\\s+ended\\s*:?\\s*" + DATE);
  private static final Pattern QUARTERLY =
      Pattern.compile("(?i)\\bfor\\s+the\\s+quarterly\\s+period\\s+ended\\s*:?\\s*" + DATE);
  private static final Pattern REPORT_DATE = Pattern.compile("(?i)\\bdate\\s+of\\s+report\\b");
  private static final Pattern ANY_DATE = Pattern.compile("(?i)" + DATE);
  /** A release's "results for the quarter and year ended December 31, 2022". */
  private static final Pattern RESULTS_PERIOD =
      Pattern.compile("(?i)\\b(?:quarter|year|period)\\b[^.;]{0,80}?\\bended\\s+" + DATE);
  /** "(NYSE: MGM)", "(NASDAQ: ULTA)": how a press release names its issuer. */
  private static final Pattern TICKER = Pattern.compile("\\((?:NYSE|NASDAQ|Nasdaq|NYSE American|NYSE Arca"
      + "|NYSE MKT|Nasdaq GS|NasdaqGS|TSX|TSXV|LSE|ASX|OTCQX|OTC)\\s*:\\s*[A-Z][A-Z0-9.\\-]{0,9}\\)");
  private static final Pattern NAME_TOKEN = Pattern.compile("[\\p{Lu}\\p{N}][\\p{L}\\p{N}.&'’,\\-]*|&");
  private static final Pattern CONNECTOR = Pattern.compile("of|and|the|de|du|la|&");
  private static final Pattern CORPORATE_SUFFIX = Pattern.compile("(?i).*\\b(inc|incorporated|corp|corporation"
      + "|company|co|plc|ltd|limited|llc|l\\.?p|n\\.?v|s\\.?a|s\\.?e|ag|group|holdings?|trust|bancorp"
      + "|international)\\.?$");
  /** The other captions of a cover page's registrant block, which are never the name. */
  private static final Pattern COVER_CAPTION = Pattern.compile("(?i).*\\b(state|jurisdiction|incorporation"
      + "|organization|commission|file\\s+number|i\\.?r\\.?s\\.?|employer|identification|address|zip"
      + "|telephone)\\b.*");

  /** The document's identity, or empty when its first pages follow none of the conventions above. */
  public static Optional<FilingIdentity> find(List<DocItem> items) {
    List<String> lines = firstLines(items);
    String company = registrant(lines);
    if (company == null) {
      company = issuer(lines);
    }
    String form = null;
    for (String line : lines) {
      Matcher m = FORM.matcher(line);
      if (m.matches()) {
        form = "Form " + m.group(1).toUpperCase(Locale.ROOT).replaceAll("\\s+", " ")
            + (m.group(2) == null ? "" : "/A");
        break;
      }
    }
    if (company == null && form == null) {
      return Optional.empty();
    }
    String period = null;
    String fiscalYear = null;
    String joined = String.join("\n", lines);
    Matcher annual = ANNUAL.matcher(joined);
    Matcher quarterly = QUARTERLY.matcher(joined);
    Matcher results = RESULTS_PERIOD.matcher(joined);
    if (annual.find()) {
      period = "fiscal year ended " + date(annual.group(2));
      fiscalYear = "FY" + annual.group(3);
    } else if (quarterly.find()) {
      period = "quarterly period ended " + date(quarterly.group(1));
    } else if ((period = reportDate(lines)) != null) {
      // an 8-K: the date of the event it reports
    } else if (results.find()) {
      String phrase = results.group().replaceAll("\\s+", " ");
      period = phrase.substring(0, phrase.length() - results.group(1).length()) + date(results.group(1));
      if (phrase.toLowerCase(Locale.ROOT).contains("year")) {
        fiscalYear = "FY" + results.group(2);
      }
    }
    return Optional.of(new FilingIdentity(company, form, period, fiscalYear));
  }

  /** What goes into the chunks' context: the parts found, in a fixed order. */
  public String text() {
    StringJoiner out = new StringJoiner(" | ");
    for (String part : new String[] {company, form, period, fiscalYear}) {
      if (part != null) {
        out.add(part);
      }
    }
    return out.toString();
  }

  /**
   * {@link #text()} without what {@code named} (the document's title and file name) already says:
   * the company when its first word is there, the form when its letters and digits are ("10K"),
   * the period and fiscal year when their year is. Saying it again only adds words that every
   * chunk of the document shares: they lift its short chunks (BM25 weighs a term by the chunk's
   * length) and make its vectors alike, and the filings bench measured that (BENCHMARKS.md).
   */
  public String textBeyond(String named) {
    String name = named == null ? "" : named.toLowerCase(Locale.ROOT);
    String compact = name.replaceAll("[^\\p{L}\\p{N}]+", "");
    StringJoiner out = new StringJoiner(" | ");
    if (company != null) {
      String first = company.toLowerCase(Locale.ROOT).replaceFirst("^the\\s+", "").split("[^\\p{L}\\p{N}]+")[0];
      if (first.isEmpty() || !compact.contains(first)) {
        out.add(company);
      }
    }
    if (form != null && !compact.contains(form.toLowerCase(Locale.ROOT).replaceFirst("^form\\s+", "")
        .replaceAll("[^\\p{L}\\p{N}]+", ""))) {
      out.add(form);
    }
    String year = fiscalYear != null ? fiscalYear.substring(2)
        : period == null ? null : period.replaceAll(".*(\\d{4})$", "$1");
    if (year != null && !Pattern.compile("(?<!\\d)" + Pattern.quote(year) + "(?!\\d)").matcher(name).find()) {
      if (period != null) {
        out.add(period);
      }
      if (fiscalYear != null) {
        out.add(fiscalYear);
      }
    }
    return out.toString();
  }

  /**
   * The text of the first pages as lines: each item's text, a table's cells one by one (cover
   * pages are often laid out as tables), with spaces collapsed. Furniture is left out.
   */
  static List<String> firstLines(List<DocItem> items) {
    List<String> lines = new ArrayList<>();
    for (DocItem item : items) {
      boolean paged = !item.pageNumbers().isEmpty();
      if (paged ? item.pageNumbers().get(0) > PAGES : lines.size() >= LINES_WITHOUT_PAGES) {
        if (paged) {
          continue;
        }
        break;
      }
      if (item.label().equals("page_header") || item.label().equals("page_footer")) {
        continue;
      }
      if (item.label().equals("table")) {
        for (String row : item.text().split("\n")) {
          if (row.matches("\\|?(\\s*:?-+:?\\s*\\|)+\\s*")) {
            continue;
          }
          for (String cell : row.split("(?<!\\\\)\\|")) {
            add(lines, cell);
          }
        }
      } else {
        add(lines, item.text());
      }
    }
    return lines;
  }

  private static void add(List<String> lines, String text) {
    String t = text.replace('\u00a0', ' ').replaceAll("\\s+", " ").strip();
    if (!t.isEmpty()) {
      lines.add(t);
    }
  }

  /** The name printed above "(Exact name of registrant as specified in its charter)". */
  private static String registrant(List<String> lines) {
    for (int i = 0; i < lines.size(); i++) {
      Matcher m = REGISTRANT.matcher(lines.get(i));
      if (!m.find()) {
        continue;
      }
      String prefix = lines.get(i).substring(0, m.start());
      if (!prefix.isBlank()) {
        // The name shares the caption's line, or the caption is inside prose: never look above it.
        return name(prefix);
      }
      String nearest = null;
      for (int j = i - 1; j >= Math.max(0, i - REGISTRANT_LOOKBACK); j--) {
        String candidate = name(lines.get(j));
        if (candidate == null) {
          continue;
        }
        if (CORPORATE_SUFFIX.matcher(candidate).matches()) {
          return candidate;
        }
        // One bare word ("Delaware", "Jersey") is the state of incorporation, not a company.
        if (nearest == null && candidate.contains(" ")) {
          nearest = candidate;
        }
      }
      return nearest;
    }
    return null;
  }

  /** A cover-page line that can be a company's name, cleaned; null for captions, numbers, marks. */
  private static String name(String line) {
    String t = line.replaceAll("[\\s_]+", " ").strip();
    t = t.replaceAll("[,;:]+$", "").strip();
    if (t.length() < 2 || t.length() > MAX_NAME_CHARS || !t.matches(".*\\p{L}\\p{L}.*")
        || COVER_CAPTION.matcher(t).matches() || t.startsWith("(")) {
      return null;
    }
    return t;
  }

  /** A release's issuer: the capitalised words just before "(NYSE: MGM)". */
  private static String issuer(List<String> lines) {
    for (String line : lines) {
      Matcher m = TICKER.matcher(line);
      if (!m.find()) {
        continue;
      }
      String[] words = line.substring(0, m.start()).strip().split("\\s+");
      int start = words.length;
      while (start > 0 && (NAME_TOKEN.matcher(words[start - 1]).matches()
          || (start < words.length && CONNECTOR.matcher(words[start - 1]).matches()))) {
        start--;
      }
      while (start < words.length && CONNECTOR.matcher(words[start]).matches()) {
        start++;
      }
      if (start < words.length) {
        String candidate = name(String.join(" ", List.of(words).subList(start, words.length)));
        if (candidate != null) {
          return candidate;
        }
      }
    }
    return null;
  }

  /** An 8-K's "Date of report (Date of earliest event reported): August 30, 2023". */
  private static String reportDate(List<String> lines) {
    for (int i = 0; i < lines.size(); i++) {
      if (!REPORT_DATE.matcher(lines.get(i)).find()) {
        continue;
      }
      for (int j = i; j < Math.min(lines.size(), i + 3); j++) {
        Matcher d = ANY_DATE.matcher(lines.get(j));
        if (d.find()) {
          return "report dated " + date(d.group(1));
        }
      }
    }
    return null;
  }

  /** "DECEMBER 31 ,2022" as "December 31, 2022". */
  private static String date(String raw) {
    Matcher m = Pattern.compile("(?i)(\\p{L}+)\\s+(\\d{1,2})\\s*,?\\s*(\\d{4})").matcher(raw);
    if (!m.matches()) {
      return raw;
    }
    String month = m.group(1);
    return month.substring(0, 1).toUpperCase(Locale.ROOT) + month.substring(1).toLowerCase(Locale.ROOT)
        + " " + m.group(2) + ", " + m.group(3);
  }
}
