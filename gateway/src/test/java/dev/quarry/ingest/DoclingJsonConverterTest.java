package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.quarry.ingest.IngestException.Reason;
import dev.quarry.support.SharedData;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

@DisplayName("DoclingJsonConverter")
class DoclingJsonConverterTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final DoclingJsonConverter converter = new DoclingJsonConverter();

  static Stream<Path> referenceJsons() throws Exception {
    try (Stream<Path> files = Files.walk(SharedData.path("docling"))) {
      return files.filter(p -> p.toString().endsWith(".json"))
          .filter(p -> !p.getFileName().toString().equals("DoclingDocument.schema.json"))
          .sorted().toList().stream();
    }
  }

  private ConvertedDocument convert(Path path) throws Exception {
    return converter.convert(path.getFileName().toString(), Files.readAllBytes(path));
  }

  private ConvertedDocument convert(String json) throws IngestException {
    return converter.convert("doc.json", json.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  @DisplayName("imports the DocLayNet paper: 9 pages, 5 tables of the right shapes, its title")
  void docLayNetPaper() throws Exception {
    ConvertedDocument doc = convert(SharedData.path("docling/docling-json/2206.01062.json"));
    List<DocItem> items = doc.items();

    Set<Integer> pages = new TreeSet<>();
    items.forEach(i -> pages.addAll(i.pageNumbers()));
    assertThat(pages).containsExactly(1, 2, 3, 4, 5, 6, 7, 8, 9);

    List<DocItem> tables = items.stream().filter(i -> i.label().equals("table")).toList();
    assertThat(tables).extracting(DocItem::selfRef)
        .containsExactly("#/tables/0", "#/tables/1", "#/tables/2", "#/tables/3", "#/tables/4");
    assertThat(tables).extracting(t -> ConversionReport.tableShape(t.text()))
        .containsExactly("14x12", "14x6", "13x5", "14x5", "15x5");
    assertThat(tables).extracting(DocItem::pageNumbers)
        .containsExactly(List.of(4), List.of(6), List.of(7), List.of(7), List.of(8));
    // A merged header cell ("% of Total" spans three columns) is repeated in each column it spans.
    assertThat(tables.get(0).text().lines().findFirst().orElseThrow())
        .contains("| % of Total | % of Total | % of Total |");

    assertThat(doc.title()).startsWith("DocLayNet: A Large Human-Annotated Dataset");
    assertThat(items.get(0)).satisfies(first -> {
      assertThat(first.label()).isEqualTo("page_header");
      assertThat(first.text()).startsWith("arXiv:2206.01062v1");
      assertThat(first.pageNumbers()).containsExactly(1);
    });
    assertThat(items.get(1).label()).isEqualTo("section_header");
    assertThat(items.get(1).headingLevel()).isEqualTo(1);

    DocItem picture = items.stream().filter(i -> i.selfRef().equals("#/pictures/0")).findFirst().orElseThrow();
    assertThat(picture.label()).isEqualTo("picture");
    assertThat(picture.text()).startsWith("Figure 1: Four examples of complex page layouts");
    DocItem caption = items.get(picture.position() + 1);
    assertThat(caption.selfRef()).isEqualTo("#/texts/5");
    assertThat(caption.treeDepth()).isEqualTo(picture.treeDepth() + 1);

    DocItem listItem = items.stream().filter(i -> i.selfRef().equals("#/texts/327")).findFirst().orElseThrow();
    assertThat(listItem.label()).isEqualTo("list_item");
    assertThat(listItem.treeDepth()).isEqualTo(1);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("referenceJsons")
  @DisplayName("imports every item of a reference json with docling's label, pages and level")
  void everyItemImported(Path path) throws Exception {
    JsonNode root = JSON.readTree(path.toFile());
    List<DocItem> items = convert(path).items();
    Map<String, DocItem> byRef = new HashMap<>();
    for (DocItem i : items) {
      assertThat(byRef.put(i.selfRef(), i)).as("%s imported once", i.selfRef()).isNull();
    }

    // A blank list item whose words docling put in an inline group below it takes those words.
    Map<String, String> listItemGroups = new HashMap<>();
    for (JsonNode t : root.get("texts")) {
      String first = t.path("children").path(0).path("$ref").asText("");
      if (t.get("label").asText().equals("list_item") && t.get("text").asText().isBlank()
          && first.startsWith("#/groups/")
          && root.get("groups").get(Integer.parseInt(first.split("/")[2])).get("label").asText().equals("inline")) {
        listItemGroups.put(first, t.get("self_ref").asText());
      }
    }
    Set<String> inInlineGroups = new HashSet<>();
    int foldedGroups = 0;
    for (JsonNode g : root.get("groups")) {
      if (g.get("label").asText().equals("inline")) {
        String groupRef = g.get("self_ref").asText();
        collectInline(root, g, inInlineGroups);
        String listItem = listItemGroups.get(groupRef);
        if (listItem != null) {
          foldedGroups++;
          assertThat(byRef).doesNotContainKey(groupRef);
          assertThat(byRef.get(listItem).text()).as(listItem).isNotBlank();
          continue;
        }
        assertThat(byRef.get(groupRef)).as(groupRef).isNotNull()
            .extracting(DocItem::label).isEqualTo("text");
      }
    }
    int expected = inInlineGroups.size();
    for (String kind : List.of("texts", "tables", "pictures")) {
      for (JsonNode node : root.get(kind)) {
        String ref = node.get("self_ref").asText();
        if (inInlineGroups.contains(ref)) {
          assertThat(byRef).as("%s is folded into its inline group", ref).doesNotContainKey(ref);
          continue;
        }
        DocItem item = byRef.get(ref);
        assertThat(item).as(ref).isNotNull();
        assertThat(item.label()).as(ref).isEqualTo(node.get("label").asText());
        Set<Integer> pages = new TreeSet<>();
        node.path("prov").forEach(p -> pages.add(p.get("page_no").asInt()));
        assertThat(item.pageNumbers()).as(ref).containsExactlyElementsOf(pages);
        int level = node.get("label").asText().equals("section_header") ? node.get("level").asInt() : 0;
        assertThat(item.headingLevel()).as(ref).isEqualTo(level);
        if (kind.equals("texts") && !listItemGroups.containsValue(ref)) {
          assertThat(item.text()).as(ref).isEqualTo(node.get("text").asText());
        }
      }
    }
    long inlineGroups = items.stream().filter(i -> i.selfRef().startsWith("#/groups/")).count();
    assertThat(inlineGroups + foldedGroups)
        .isEqualTo(root.get("groups").findValuesAsText("label").stream().filter("inline"::equals).count());
    assertThat(items.size() - inlineGroups + expected)
        .isEqualTo(root.get("texts").size() + root.get("tables").size() + root.get("pictures").size());
  }

  private static void collectInline(JsonNode root, JsonNode group, Set<String> out) {
    for (JsonNode c : group.path("children")) {
      String ref = c.get("$ref").asText();
      String[] parts = ref.split("/");
      JsonNode node = root.get(parts[1]).get(Integer.parseInt(parts[2]));
      if (!parts[1].equals("groups")) {
        if (parts[1].equals("texts")) {
          out.add(ref);
        }
      }
      collectInline(root, node, out);
    }
  }

  @Test
  @DisplayName("joins an inline group's fragments into one text item named after the group")
  void inlineGroup() throws Exception {
    List<DocItem> items = convert(SharedData.path("docling/html/wiki_duck.html.json")).items();
    DocItem redirected = items.stream().filter(i -> i.selfRef().equals("#/groups/41")).findFirst().orElseThrow();
    assertThat(redirected.label()).isEqualTo("text");
    assertThat(redirected.text()).isEqualTo("(Redirected from Duckling )");
    assertThat(redirected.pageNumbers()).isEmpty();
  }

  @Test
  @DisplayName("gives a blank list item the words of the inline group docling put below it")
  void listItemWithInlineGroup() throws Exception {
    List<DocItem> items = convert(SharedData.path("docling/html/wiki_duck.html.json")).items();
    DocItem behaviour = items.stream().filter(i -> i.selfRef().equals("#/texts/43")).findFirst().orElseThrow();
    assertThat(behaviour.label()).isEqualTo("list_item");
    assertThat(behaviour.text()).isEqualTo("5 Behaviour Toggle Behaviour subsection");
    assertThat(items).noneMatch(i -> i.selfRef().equals("#/groups/15"));
    DocItem feeding = items.get(behaviour.position() + 1);
    assertThat(feeding.selfRef()).isEqualTo("#/texts/46");
    assertThat(feeding.treeDepth()).isEqualTo(behaviour.treeDepth() + 2);
  }

  @Test
  @DisplayName("takes the title from the body's title item, not the furniture's")
  void titleFromBody() throws Exception {
    assertThat(convert(SharedData.path("docling/html/wiki_duck.html.json")).title()).isEqualTo("Duck");
  }

  @Test
  @DisplayName("puts furniture-tree headers before the first item of their page and footers after the last")
  void furnitureInterleavedByPage() throws Exception {
    String json = """
        {"schema_name": "DoclingDocument", "name": "x",
         "body": {"self_ref": "#/body", "children": [{"$ref": "#/texts/0"}, {"$ref": "#/texts/1"}, {"$ref": "#/texts/2"}]},
         "furniture": {"self_ref": "#/furniture", "children": [{"$ref": "#/texts/3"}, {"$ref": "#/texts/4"}, {"$ref": "#/texts/5"}]},
         "groups": [], "tables": [], "pictures": [],
         "texts": [
          {"self_ref": "#/texts/0", "label": "section_header", "level": 2, "text": "One", "prov": [{"page_no": 1}]},
          {"self_ref": "#/texts/1", "label": "text", "text": "a", "prov": [{"page_no": 1}]},
          {"self_ref": "#/texts/2", "label": "text", "text": "b", "prov": [{"page_no": 2}]},
          {"self_ref": "#/texts/3", "label": "page_header", "text": "H1", "prov": [{"page_no": 1}]},
          {"self_ref": "#/texts/4", "label": "page_footer", "text": "F1", "prov": [{"page_no": 1}]},
          {"self_ref": "#/texts/5", "label": "page_header", "text": "H2", "prov": [{"page_no": 2}]}
         ]}""";
    ConvertedDocument doc = convert(json);
    assertThat(doc.items()).extracting(DocItem::text).containsExactly("H1", "One", "a", "F1", "H2", "b");
    assertThat(doc.items().get(1).headingLevel()).isEqualTo(2);
    assertThat(doc.title()).isEqualTo("One");
  }

  @Test
  @DisplayName("renders a table without a grid from its cells, repeating spans")
  void tableFromCells() throws Exception {
    String json = """
        {"schema_name": "DoclingDocument", "body": {"children": [{"$ref": "#/tables/0"}]},
         "texts": [], "groups": [], "pictures": [],
         "tables": [{"self_ref": "#/tables/0", "label": "table", "data": {"num_rows": 2, "num_cols": 2,
           "table_cells": [
            {"start_row_offset_idx": 0, "end_row_offset_idx": 1, "start_col_offset_idx": 0, "end_col_offset_idx": 2, "text": "Head"},
            {"start_row_offset_idx": 1, "end_row_offset_idx": 2, "start_col_offset_idx": 0, "end_col_offset_idx": 1, "text": "a"},
            {"start_row_offset_idx": 1, "end_row_offset_idx": 2, "start_col_offset_idx": 1, "end_col_offset_idx": 2, "text": "b|c"}]}}]}""";
    assertThat(convert(json).items().get(0).text())
        .isEqualTo("| Head | Head |\n|---|---|\n| a | b\\|c |");
  }

  @Test
  @DisplayName("rejects input that is not JSON")
  void notJson() {
    assertMalformed("{\"body\": ", "not valid JSON");
    assertMalformed("%PDF-1.4", "not valid JSON");
  }

  @Test
  @DisplayName("rejects JSON that is not a DoclingDocument")
  void notDocling() {
    assertMalformed("[1, 2]", "not a JSON object");
    assertMalformed("{\"schema_name\": \"Other\", \"body\": {}}", "schema_name is 'Other'");
    assertMalformed("{\"schema_name\": \"DoclingDocument\"}", "no 'body' tree");
  }

  @Test
  @DisplayName("rejects dangling and unknown references")
  void danglingRefs() {
    assertMalformed("{\"body\": {\"children\": [{\"$ref\": \"#/texts/3\"}]}, \"texts\": []}",
        "dangling reference #/texts/3");
    assertMalformed("{\"body\": {\"children\": [{\"$ref\": \"http://evil/x\"}]}}", "bad reference 'http://evil/x'");
    assertMalformed("{\"body\": {\"children\": [{\"$ref\": \"#/texts/0\"}]},"
        + " \"texts\": [{\"self_ref\": \"#/texts/7\", \"label\": \"text\", \"text\": \"x\"}]}", "self_ref is #/texts/7");
  }

  @Test
  @DisplayName("rejects cycles and children shared by two parents")
  void cycles() {
    assertMalformed("""
        {"body": {"children": [{"$ref": "#/groups/0"}]},
         "groups": [{"self_ref": "#/groups/0", "label": "list", "children": [{"$ref": "#/groups/0"}]}]}""",
        "#/groups/0 is reached twice");
    assertMalformed("""
        {"body": {"children": [{"$ref": "#/texts/0"}, {"$ref": "#/texts/0"}]},
         "texts": [{"self_ref": "#/texts/0", "label": "text", "text": "x"}]}""",
        "#/texts/0 is reached twice");
  }

  @Test
  @DisplayName("rejects absurdly deep nesting instead of overflowing the stack")
  void tooDeep() {
    StringBuilder groups = new StringBuilder();
    int n = 500;
    for (int i = 0; i < n; i++) {
      if (i > 0) {
        groups.append(',');
      }
      String child = i + 1 < n ? "[{\"$ref\": \"#/groups/" + (i + 1) + "\"}]" : "[]";
      groups.append("{\"self_ref\": \"#/groups/").append(i).append("\", \"label\": \"list\", \"children\": ")
          .append(child).append('}');
    }
    assertMalformed("{\"body\": {\"children\": [{\"$ref\": \"#/groups/0\"}]}, \"groups\": [" + groups + "]}",
        "nested deeper than");
  }

  private void assertMalformed(String json, String detail) {
    assertThatThrownBy(() -> convert(json))
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.MALFORMED);
          assertThat(e.getMessage()).startsWith("doc.json: ").contains(detail);
        });
  }
}
