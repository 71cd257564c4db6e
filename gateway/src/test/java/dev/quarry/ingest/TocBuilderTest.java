package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("TocBuilder")
class TocBuilderTest {

  /** Items from a compact spec: "h2:Title" is a level-2 header, "title:X" a title, else text. */
  static List<DocItem> items(String... spec) {
    List<DocItem> out = new ArrayList<>();
    for (String s : spec) {
      int p = out.size();
      if (s.startsWith("h")) {
        int level = s.charAt(1) - '0';
        out.add(new DocItem(p, "#/texts/" + p, "section_header", s.substring(3), List.of(p + 1), level, 0));
      } else if (s.startsWith("title:")) {
        out.add(new DocItem(p, "#/texts/" + p, "title", s.substring(6), List.of(), 0, 0));
      } else if (s.startsWith("table:")) {
        out.add(new DocItem(p, "#/tables/" + p, "table", s.substring(6), List.of(), 0, 0));
      } else if (s.startsWith("footer:")) {
        out.add(new DocItem(p, "#/texts/" + p, "page_footer", s.substring(7), List.of(), 0, 0));
      } else {
        out.add(new DocItem(p, "#/texts/" + p, "text", s, List.of(), 0, 0));
      }
    }
    return out;
  }

  @Test
  @DisplayName("nests deeper headers and ends a node at the next header of the same or a higher level")
  void nesting() {
    //                        0        1    2         3    4         5    6         7
    Toc toc = TocBuilder.build(items("h1:A", "a", "h2:A.1", "x", "h3:deep", "y", "h2:A.2", "z",
        "h1:B", "b"));
    assertThat(toc.tree()).hasSize(2);
    TocNode a = toc.tree().get(0);
    assertThat(a.title()).isEqualTo("A");
    assertThat(List.of(a.start(), a.endExclusive())).containsExactly(0, 8);
    assertThat(a.children()).extracting(TocNode::title).containsExactly("A.1", "A.2");
    TocNode a1 = a.children().get(0);
    assertThat(List.of(a1.start(), a1.endExclusive())).containsExactly(2, 6);
    assertThat(a1.children()).singleElement().satisfies(n -> {
      assertThat(n.level()).isEqualTo(3);
      assertThat(List.of(n.start(), n.endExclusive())).containsExactly(4, 6);
    });
    assertThat(List.of(a.children().get(1).start(), a.children().get(1).endExclusive())).containsExactly(6, 8);
    TocNode b = toc.tree().get(1);
    assertThat(List.of(b.start(), b.endExclusive())).containsExactly(8, 10);
  }

  @Test
  @DisplayName("a level-3 header directly under a level-1 one nests without an invented level 2")
  void skippedLevel() {
    Toc toc = TocBuilder.build(items("h1:A", "h3:deep", "x", "h2:mid", "y"));
    TocNode a = toc.tree().get(0);
    assertThat(a.children()).extracting(TocNode::title).containsExactly("deep", "mid");
    assertThat(a.children().get(0).endExclusive()).isEqualTo(3);
  }

  @Test
  @DisplayName("every item knows the range and heading path of its innermost section")
  void sectionOfEachItem() {
    Toc toc = TocBuilder.build(items("intro", "h1:A", "a", "h2:A.1", "x", "h1:B", "b"));
    assertThat(toc.sectionStart()).containsExactly(0, 1, 1, 3, 3, 5, 5);
    assertThat(toc.sectionEnd()).containsExactly(7, 5, 5, 5, 5, 7, 7);
    assertThat(toc.headingPaths().get(0)).isEmpty();
    assertThat(toc.headingPaths().get(4)).containsExactly("A", "A.1");
    assertThat(toc.headingPaths().get(6)).containsExactly("B");
  }

  @Test
  @DisplayName("headers without levels (or all of one level) give a flat tree of level-1 siblings")
  void flat() {
    List<DocItem> items = new ArrayList<>(items("p", "h0:one", "x", "h0:two", "y"));
    Toc toc = TocBuilder.build(items);
    assertThat(toc.tree()).extracting(TocNode::title).containsExactly("one", "two");
    assertThat(toc.tree()).allSatisfy(n -> {
      assertThat(n.level()).isEqualTo(1);
      assertThat(n.children()).isEmpty();
    });
    assertThat(toc.tree().get(0).endExclusive()).isEqualTo(3);
  }

  @Test
  @DisplayName("no headers: an empty tree, every item in the whole-document range")
  void empty() {
    Toc toc = TocBuilder.build(items("title:Doc", "a", "b"));
    assertThat(toc.tree()).isEmpty();
    assertThat(toc.sectionStart()).containsOnly(0);
    assertThat(toc.sectionEnd()).containsOnly(3);
    UUID id = UUID.randomUUID();
    assertThat(toc.toJson(id, "Doc")).isEqualTo(new JsonObject()
        .put("doc_id", id.toString()).put("title", "Doc").put("tree", new io.vertx.core.json.JsonArray()));
  }

  @Test
  @DisplayName("a title item is not a node, and closes the sections before it")
  void titleClosesSections() {
    Toc toc = TocBuilder.build(items("h1:Front", "x", "title:Main", "body", "h1:A", "a"));
    assertThat(toc.tree()).extracting(TocNode::title).containsExactly("Front", "A");
    assertThat(toc.tree().get(0).endExclusive()).isEqualTo(2);
    assertThat(toc.sectionEnd()[3]).isEqualTo(6);
  }

  @Test
  @DisplayName("toc.json nodes have exactly the CONTRACT fields")
  void json() {
    Toc toc = TocBuilder.build(items("h1:A", "a", "h2:B", "b"));
    JsonObject node = toc.toJson(UUID.randomUUID(), "T").getJsonArray("tree").getJsonObject(0);
    assertThat(node.fieldNames()).containsExactlyInAnyOrder("self_ref", "level", "title", "position",
        "page_numbers", "item_range", "children");
    assertThat(node.getJsonArray("item_range").getList()).containsExactly(0, 4);
    assertThat(node.getJsonArray("page_numbers").getList()).containsExactly(1);
    assertThat(node.getJsonArray("children").getJsonObject(0).getString("self_ref")).isEqualTo("#/texts/2");
  }
}
