package dev.quarry.bench;

import dev.quarry.store.DocItem;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * The primary financial statements of a converted filing, and what conversion made of each: a
 * statement starts at an item titled like one ("Consolidated Statements of Cash Flows", "The
 * Boeing Company and Subsidiaries Consolidated Balance Sheets", "… (continued)"), and holds the
 * tables up to the next heading that is not its own continuation. Found from the items alone, so
 * it measures any converter the same way; it knows no filing.
 */
final class FilingStatements {
  /** A statement's title: what a filing calls its primary statements, a company name before it. */
  static final Pattern TITLE = Pattern.compile(
      "(?i)^(?!analysis\\b)(?:[\\p{L}.,&'’ –-]{0,80}?\\s)?(?:condensed\\s+)?consolidated\\s+"
          + "(?:statements?\\s+of\\s+(?:consolidated\\s+)?(?:operations|income|earnings"
          + "|comprehensive\\s+(?:income|loss|earnings)|cash\\s+flows|financial\\s+position"
          + "|(?:changes\\s+in\\s+)?(?:share|stock)holders[’']?\\s+equity"
          + "|(?:changes\\s+in\\s+)?equity)(?:\\s+and\\s+comprehensive\\s+income)?"
          + "|balance\\s+sheets?)\\s*(?:\\((?:continued|unaudited)\\))?\\s*(?:\\(.{0,60}\\))?$");
  private static final Pattern CONTINUED = Pattern.compile("(?i)\\(?continued\\)?");
  /** A period in a header cell: a year, a month, a quarter or a span of weeks or months. */
  private static final Pattern PERIOD = Pattern.compile(
      "(?i).*\\b((19|20)\\d\\d|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|quarter|q[1-4]"
          + "|weeks|months|year)\\b.*");

  private FilingStatements() {}

  /** One statement: its title, its pages, its tables and how many of them have a period header. */
  record Statement(String title, List<Integer> pages, int tables, int headers, int periodHeaders,
      int multiPageTables) {
    boolean oneTable() {
      return tables == 1;
    }
  }

  static List<Statement> find(List<DocItem> items) {
    List<Statement> out = new ArrayList<>();
    int lastTitle = -10;
    for (int i = 0; i < items.size(); i++) {
      DocItem title = items.get(i);
      if (!isTitle(title) || continuation(title)) {
        continue;
      }
      // The same title again with its unit ("… of Income (In thousands)"), or over the next
      // page: one statement.
      boolean repeated = i - lastTitle <= 3 && title.text().toLowerCase(Locale.ROOT)
          .startsWith(items.get(lastTitle).text().toLowerCase(Locale.ROOT))
          && !tableOnItsPage(items, lastTitle, i);
      lastTitle = i;
      if (repeated) {
        continue;
      }
      TreeSet<Integer> pages = new TreeSet<>(title.pageNumbers());
      int tables = 0;
      int headed = 0;
      int periods = 0;
      int multiPage = 0;
      int firstPage = title.pageNumbers().isEmpty() ? 0 : title.pageNumbers().get(0);
      for (int j = i + 1; j < items.size(); j++) {
        DocItem item = items.get(j);
        if (isTitle(item) && !continuation(item) && (!item.text().toLowerCase(Locale.ROOT)
            .startsWith(title.text().toLowerCase(Locale.ROOT)) || tableOnItsPage(items, i, j))) {
          break;
        }
        // Headings before the first table are the statement's own (the company's name, units).
        boolean heading = item.label().equals("section_header") || item.label().equals("title");
        if (heading && tables > 0 && !continuation(item) || !item.pageNumbers().isEmpty()
            && item.pageNumbers().get(0) > firstPage + 2) {
          break;
        }
        if (item.label().equals("table")) {
          tables++;
          headed += FilingsConversionBench.hasHeader(item.text()) ? 1 : 0;
          periods += periodHeader(item.text()) ? 1 : 0;
          multiPage += item.pageNumbers().size() > 1 ? 1 : 0;
          pages.addAll(item.pageNumbers());
        }
      }
      out.add(new Statement(title.text(), List.copyOf(pages), tables, headed, periods, multiPage));
    }
    return out;
  }

  /**
   * Whether a table between items {@code from} and {@code at} ends on the page {@code at} starts:
   * the same title again under a table on its own page opens a statement of its own (an earnings
   * release's quarter and its full year, each under "Consolidated Statements of Income"), where
   * on the next page it is the statement's continuation.
   */
  private static boolean tableOnItsPage(List<DocItem> items, int from, int at) {
    List<Integer> pages = items.get(at).pageNumbers();
    if (pages.isEmpty()) {
      return false;
    }
    for (DocItem t : items.subList(from + 1, at)) {
      if (t.label().equals("table") && !t.pageNumbers().isEmpty()
          && t.pageNumbers().get(t.pageNumbers().size() - 1).equals(pages.get(0))) {
        return true;
      }
    }
    return false;
  }

  private static boolean isTitle(DocItem item) {
    return !item.label().equals("table") && item.text().split("\\s+").length <= 20
        && TITLE.matcher(item.text().strip()).matches();
  }

  private static boolean continuation(DocItem item) {
    return CONTINUED.matcher(item.text()).find()
        && (isTitle(item) || item.text().length() <= 40);
  }

  /**
   * Whether a Markdown table's first row names periods: every non-empty cell past the label column
   * holds a year, a month, a quarter or a span, and there is at least one.
   */
  static boolean periodHeader(String markdown) {
    if (!FilingsConversionBench.hasHeader(markdown)) {
      return false;
    }
    String first = markdown.split("\n")[0].strip();
    String[] cells = first.substring(1, first.length() - 1).split("(?<!\\\\)\\|", -1);
    int periods = 0;
    for (int c = 1; c < cells.length; c++) {
      String cell = cells[c].strip().toLowerCase(Locale.ROOT);
      if (cell.isEmpty()) {
        continue;
      }
      if (!PERIOD.matcher(cell).matches()) {
        return false;
      }
      periods++;
    }
    return periods > 0;
  }
}
