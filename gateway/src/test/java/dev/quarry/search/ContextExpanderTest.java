package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.search.ContextExpander.Item;
import dev.quarry.search.ContextExpander.RankedHit;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Context expansion rules, on hand-made hits")
class ContextExpanderTest {
  static final UUID DOC = UUID.randomUUID();
  static final UUID OTHER_DOC = UUID.randomUUID();

  /** Ten items of 18 characters (cost 20 each with the separator). */
  static List<Item> items(int from, int to) {
    List<Item> out = new ArrayList<>();
    for (int i = from; i < to; i++) {
      out.add(new Item(i, "#/texts/" + i, "text", "item %02d of the doc".formatted(i).substring(0, 18),
          List.of(1 + i / 5)));
    }
    return out;
  }

  static RankedHit hit(UUID doc, int position, double score, long sectionCost) {
    return new RankedHit(UUID.randomUUID(), score, doc, "Doc", "file:doc.md", position,
        position + 1, List.of("H"), "item %02d of the doc".formatted(position).substring(0, 18),
        List.of(1), List.of("#/texts/" + position), List.of("text"), sectionCost, items(0, 10));
  }

  static List<String> refs(SearchHit h) {
    return h.docItemRefs();
  }

  @Test
  @DisplayName("a chunk's heading path (added for embedding) does not stop its items being used")
  void headingPathIsNotContent() {
    RankedHit h = hit(DOC, 4, 1.0, 200);
    String item = "item 04 of the doc";
    RankedHit withPath = new RankedHit(h.chunkId(), h.score(), DOC, "Doc", "file:doc.md", 4, 5,
        List.of("Part one", "Section 1.1"), "Part one > Section 1.1\n\n" + item, List.of(1),
        List.of("#/texts/4"), List.of("text"), 20, items(4, 5));
    List<SearchHit> out = new ContextExpander(1000).expand(List.of(withPath), 5);
    assertThat(out.get(0).content()).isEqualTo(item);
    assertThat(refs(out.get(0))).containsExactly("#/texts/4");
  }

  @Test
  @DisplayName("growth alternates: next item first, then the previous one")
  void alternates() {
    // Budget 78 = four items (4 * 20 - 2): the hit, after, before, after.
    List<SearchHit> out = new ContextExpander(78).expand(List.of(hit(DOC, 4, 1.0, 200)), 5);
    assertThat(refs(out.get(0))).containsExactly("#/texts/3", "#/texts/4", "#/texts/5",
        "#/texts/6");
    assertThat(out.get(0).pageNumbers()).containsExactly(1, 2);
  }

  @Test
  @DisplayName("at a section edge the other side keeps growing")
  void edge() {
    List<SearchHit> out = new ContextExpander(78).expand(List.of(hit(DOC, 9, 1.0, 200)), 5);
    assertThat(refs(out.get(0))).containsExactly("#/texts/6", "#/texts/7", "#/texts/8",
        "#/texts/9");
  }

  @Test
  @DisplayName("overlapping contexts in one document merge; the better hit names the result")
  void merges() {
    RankedHit best = hit(DOC, 1, 0.9, 200);
    RankedHit second = hit(DOC, 2, 0.5, 200);
    RankedHit elsewhere = hit(OTHER_DOC, 4, 0.4, 200);
    RankedHit apart = headed(hit(DOC, 8, 0.3, 200), List.of("Another section"));
    // Budget 58 = three items: [0, 3), [1, 4) overlap; [7, 10) does not, nor shares their page,
    // nor continues their section.
    List<SearchHit> out = new ContextExpander(58).expand(List.of(best, second, elsewhere, apart), 5);
    assertThat(out).hasSize(3);
    assertThat(out.get(0).chunkId()).isEqualTo(best.chunkId());
    assertThat(out.get(0).score()).isEqualTo(0.9);
    assertThat(refs(out.get(0))).containsExactly("#/texts/0", "#/texts/1", "#/texts/2",
        "#/texts/3");
    assertThat(out.get(1).documentId()).isEqualTo(OTHER_DOC);
    assertThat(refs(out.get(2))).containsExactly("#/texts/7", "#/texts/8", "#/texts/9");
  }

  @Test
  @DisplayName("contexts that share a page merge, though their items do not overlap; other pages stay apart")
  void samePageMerges() {
    // Items 0-4 are on page 1, 5-9 on page 2. Budget 58 = three items: [0, 3) on page 1 and
    // [3, 6) on pages 1 and 2 share page 1; [7, 10), on page 2, then shares page 2 with them.
    RankedHit first = hit(DOC, 0, 0.9, 200);
    RankedHit samePage = hit(DOC, 4, 0.8, 200);
    List<SearchHit> out = new ContextExpander(58).expand(List.of(first, samePage), 5);
    assertThat(out).hasSize(1);
    assertThat(out.get(0).chunkId()).isEqualTo(first.chunkId());
    assertThat(refs(out.get(0))).containsExactly("#/texts/0", "#/texts/1", "#/texts/2",
        "#/texts/3", "#/texts/4", "#/texts/5");
    assertThat(out.get(0).pageNumbers()).containsExactly(1, 2);
    // Alone, [0, 3) and [7, 10) are on pages 1 and 2: two results when their sections differ.
    RankedHit nextPage = headed(hit(DOC, 8, 0.7, 200), List.of("Another section"));
    assertThat(new ContextExpander(58).expand(List.of(first, nextPage), 5)).hasSize(2);
    // Hits without page numbers (text, Markdown) merge only where their items overlap.
    RankedHit a = unpaged(hit(DOC, 0, 0.9, 200));
    RankedHit b = unpaged(hit(DOC, 4, 0.8, 200));
    assertThat(new ContextExpander(58).expand(List.of(a, b), 5)).hasSize(2);
  }

  @Test
  @DisplayName("one section running over a page break is one result; a page further on, or no heading path, stays apart")
  void sectionOverPageBreak() {
    // Item i is on page 1 + i / 3: [0, 3) on page 1, [7, 10) on pages 3 and 4.
    RankedHit top = paged(hit(DOC, 1, 0.9, 200), 3);
    RankedHit nextPage = paged(hit(DOC, 4, 0.8, 200), 3); // [3, 6): page 2
    RankedHit twoOn = paged(hit(DOC, 8, 0.7, 200), 3); // [7, 10): pages 3 and 4
    ContextExpander expander = new ContextExpander(58);

    List<SearchHit> merged = expander.expand(List.of(top, nextPage), 5);
    assertThat(merged).hasSize(1);
    assertThat(merged.get(0).chunkId()).isEqualTo(top.chunkId());
    assertThat(merged.get(0).score()).isEqualTo(0.9);
    assertThat(merged.get(0).pageNumbers()).containsExactly(1, 2);

    assertThat(expander.expand(List.of(top, twoOn), 5)).hasSize(2);
    assertThat(expander.expand(List.of(headed(top, List.of()), headed(nextPage, List.of())), 5))
        .hasSize(2);
    assertThat(expander.expand(List.of(top, headed(nextPage, List.of("H", "Sub"))), 5)).hasSize(2);
    RankedHit otherDoc = paged(hit(OTHER_DOC, 4, 0.8, 200), 3);
    assertThat(expander.expand(List.of(top, otherDoc), 5)).hasSize(2);
    // Once merged, the result reaches page 2, so a hit on page 3 continues it in turn.
    RankedHit pageThree = paged(hit(DOC, 7, 0.6, 200), 3); // [6, 9): page 3
    assertThat(expander.expand(List.of(top, nextPage, pageThree), 5)).hasSize(1);
  }

  /** The hit with item i on page 1 + i / perPage. */
  static RankedHit paged(RankedHit h, int perPage) {
    List<Item> items = h.items().stream()
        .map(i -> new Item(i.position(), i.selfRef(), i.label(), i.text(), List.of(1 + i.position() / perPage)))
        .toList();
    return new RankedHit(h.chunkId(), h.score(), h.documentId(), h.documentTitle(), h.documentUri(),
        h.itemStart(), h.itemEnd(), h.headings(), h.content(), List.of(1 + h.itemStart() / perPage),
        h.docItemRefs(), h.labels(), h.sectionCost(), items);
  }

  static RankedHit headed(RankedHit h, List<String> headings) {
    return new RankedHit(h.chunkId(), h.score(), h.documentId(), h.documentTitle(), h.documentUri(),
        h.itemStart(), h.itemEnd(), headings, h.content(), h.pageNumbers(), h.docItemRefs(), h.labels(),
        h.sectionCost(), h.items());
  }

  static RankedHit unpaged(RankedHit h) {
    List<Item> items = h.items().stream()
        .map(i -> new Item(i.position(), i.selfRef(), i.label(), i.text(), List.<Integer>of())).toList();
    return new RankedHit(h.chunkId(), h.score(), h.documentId(), h.documentTitle(), h.documentUri(),
        h.itemStart(), h.itemEnd(), h.headings(), h.content(), List.of(), h.docItemRefs(), h.labels(),
        h.sectionCost(), items);
  }

  @Test
  @DisplayName("a hit bridging two results merges all three into the best")
  void bridges() {
    RankedHit a = hit(DOC, 1, 0.9, 200);
    RankedHit b = hit(DOC, 5, 0.8, 200);
    RankedHit bridge = hit(DOC, 3, 0.7, 200);
    List<SearchHit> out = new ContextExpander(58).expand(List.of(a, b, bridge), 5);
    assertThat(out).hasSize(1);
    assertThat(out.get(0).chunkId()).isEqualTo(a.chunkId());
    assertThat(refs(out.get(0))).containsExactly("#/texts/0", "#/texts/1", "#/texts/2",
        "#/texts/3", "#/texts/4", "#/texts/5", "#/texts/6");
  }

  @Test
  @DisplayName("the limit counts results after merging; spare hits beyond it are ignored")
  void limitAfterMerge() {
    List<SearchHit> out = new ContextExpander(58).expand(List.of(hit(DOC, 2, 0.9, 200),
        hit(DOC, 3, 0.8, 200), hit(OTHER_DOC, 5, 0.7, 200), hit(DOC, 8, 0.6, 200)), 2);
    assertThat(out).hasSize(2);
    assertThat(out.get(1).documentId()).isEqualTo(OTHER_DOC);
  }

  @Test
  @DisplayName("a hit with no items keeps its own chunk text and references")
  void noItems() {
    RankedHit bare = new RankedHit(UUID.randomUUID(), 1.0, DOC, "Doc", "u", 3, 4, List.of(),
        "the chunk's own text", List.of(7), List.of("#/texts/3"), List.of("text"), 0, List.of());
    SearchHit out = new ContextExpander(500).expand(List.of(bare), 1).get(0);
    assertThat(out.content()).isEqualTo("the chunk's own text");
    assertThat(out.pageNumbers()).containsExactly(7);
    assertThat(out.docItemRefs()).containsExactly("#/texts/3");
  }
}
