package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.groups.Tuple.tuple;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** Generated HTML and Markdown for the forms docling's reference files only sample. */
@DisplayName("HTML forms: description lists, spanning grids, HTML inside Markdown")
class HtmlFormsTest {
  private static List<DocItem> html(String body) throws IngestException {
    return new HtmlConverter().convert("g.html", ("<html><body>" + body + "</body></html>")
        .getBytes(StandardCharsets.UTF_8)).items();
  }

  private static List<DocItem> markdown(String md) throws IngestException {
    return new MarkdownConverter().convert("g.md", md.getBytes(StandardCharsets.UTF_8)).items();
  }

  @Test
  @DisplayName("dt is a list item, dd a list item below it; a dl nested in a dd, and div-wrapped groups, nest")
  void descriptionLists() throws Exception {
    List<DocItem> items = html("<dl><dt>Term</dt><dd>First meaning</dd><dd>Second meaning</dd>"
        + "<div><dt>Grouped</dt><dd>In a div <dl><dt>Inner</dt><dd>Deep</dd></dl></dd></div></dl><p>After</p>");
    assertThat(items).extracting(DocItem::label, DocItem::text, DocItem::treeDepth).containsExactly(
        tuple("list_item", "Term", 1), tuple("list_item", "First meaning", 2), tuple("list_item", "Second meaning", 2),
        tuple("list_item", "Grouped", 1), tuple("list_item", "In a div", 2), tuple("list_item", "Inner", 4),
        tuple("list_item", "Deep", 5), tuple("text", "After", 0));
  }

  @Test
  @DisplayName("a row whose cells only open rowspans adds no row; spans fill the grid; rowspan=0 runs to the end")
  void grids() throws Exception {
    String pivot = "<table><tr><th>Year</th><th>Q</th><th>Month</th></tr>"
        + "<tr><th rowspan=5>2025</th><th rowspan=3>Q1</th></tr><tr><td>Jan</td></tr><tr><td>Feb</td></tr>"
        + "<tr><th rowspan=2>Q2</th></tr><tr><td>Apr</td></tr><tr></tr></table>";
    assertThat(html(pivot).get(0).text()).isEqualTo(
        "| Year | Q | Month |\n|---|---|---|\n| 2025 | Q1 | Jan |\n| 2025 | Q1 | Feb |\n| 2025 | Q2 | Apr |");
    String spans = "<table><thead><tr><th colspan=2>Both</th><th rowspan=0>All</th></tr></thead>"
        + "<tbody><tr><td>a</td><td>b</td></tr><tr><td colspan=2>wide</td></tr></tbody></table>";
    assertThat(html(spans).get(0).text()).isEqualTo(
        "| Both | Both | All |\n|---|---|---|\n| a | b | All |\n| wide | wide | All |");
  }

  @Test
  @DisplayName("HTML blocks in Markdown convert as HTML: tables, lists, headings, paragraphs, code, description lists")
  void htmlInMarkdown() throws Exception {
    String md = "# Doc\n\nIntro text\n\n<table><tr><th>k</th><th>v</th></tr><tr><td>1</td><td>2</td></tr></table>\n\n"
        + "<ol>\n<li>one</li>\n<li>two</li>\n</ol>\n\n<h2>Sub</h2>\n\n<pre>x = 1\ny = 2</pre>\n\n"
        + "<dl><dt>word</dt><dd>meaning</dd></dl>\n\n<div><p>In a div</p></div>\n\nThe end\n";
    assertThat(markdown(md)).extracting(DocItem::label, DocItem::text).containsExactly(
        tuple("title", "Doc"), tuple("text", "Intro text"), tuple("table", "| k | v |\n|---|---|\n| 1 | 2 |"),
        tuple("list_item", "one"), tuple("list_item", "two"), tuple("section_header", "Sub"),
        tuple("code", "x = 1\ny = 2"), tuple("list_item", "word"), tuple("list_item", "meaning"),
        tuple("text", "In a div"), tuple("text", "The end"));
  }
}
