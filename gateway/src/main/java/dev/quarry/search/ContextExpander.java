package dev.quarry.search;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

/**
 * Turns ranked chunks into search hits with their surrounding context (docs/CONTRACT.md, search):
 * the whole innermost section when its text fits the budget, otherwise the hit grown outward one
 * neighbouring item at a time, alternating sides, while the text fits. Items are never split, so a
 * table comes whole or not at all; the hit's own items always stay, so a hit is never shortened;
 * page headers, footers and footnotes around the hit are left out and cost nothing. Hits whose
 * contexts overlap in one document, or share a page of it, become one result, with the better
 * score: a paged document's ten results are then ten places in it, not three passages of one page
 * (BENCHMARKS.md, "Filings: session 12"). So do hits under one heading path on consecutive pages.
 *
 * <p>Lengths count the text as it is returned: items joined by a blank line.
 */
final class ContextExpander {
  static final Set<String> FURNITURE = Set.of("page_header", "page_footer", "footnote");

  /** What repeats on every page: left out of a hit's context wherever it stands. */
  static final Set<String> PAGE_FURNITURE = Set.of("page_header", "page_footer");
  private static final String SEPARATOR = "\n\n";

  /** One item that the context of a hit may use. */
  record Item(int position, String selfRef, String label, String text, List<Integer> pageNumbers) {}

  /**
   * A ranked chunk and the items around it: all of its section when {@code sectionCost} says the
   * section fits, else the items within reach of the budget on each side (furniture left out).
   * {@code sectionCost} sums length + 2 over the section's items, furniture around the hit excluded.
   */
  record RankedHit(
      UUID chunkId,
      double score,
      UUID documentId,
      String documentTitle,
      String documentUri,
      int itemStart,
      int itemEnd,
      List<String> headings,
      String content,
      List<Integer> pageNumbers,
      List<String> docItemRefs,
      List<String> labels,
      long sectionCost,
      List<Item> items) {}

  private final int budgetChars;

  ContextExpander(int budgetChars) {
    if (budgetChars < 1) {
      throw new IllegalArgumentException("context budget must be positive, got " + budgetChars);
    }
    this.budgetChars = budgetChars;
  }

  /** Expands hits given best first; returns at most {@code limit} results, best first. */
  List<SearchHit> expand(List<RankedHit> ranked, int limit) {
    List<Context> results = new ArrayList<>();
    for (RankedHit hit : ranked) {
      if (results.size() == limit) {
        break; // the hits after this point are spares, fetched only to fill in for merges
      }
      Context context = contextOf(hit);
      List<Context> overlapping = new ArrayList<>();
      for (Context r : results) {
        if (r.overlaps(context)) {
          overlapping.add(r);
        }
      }
      if (overlapping.isEmpty()) {
        results.add(context);
        continue;
      }
      // Results are in score order, so the first overlapping one is the best: it absorbs the rest.
      Context best = overlapping.get(0);
      best.absorb(context);
      for (Context other : overlapping.subList(1, overlapping.size())) {
        best.absorb(other);
        results.remove(other);
      }
    }
    List<SearchHit> hits = new ArrayList<>(results.size());
    for (Context r : results) {
      hits.add(r.toHit());
    }
    return hits;
  }

  private Context contextOf(RankedHit hit) {
    if (hit.items().isEmpty()) {
      return new Context(hit, new TreeMap<>());
    }
    NavigableMap<Integer, Item> available = new TreeMap<>();
    for (Item item : hit.items()) {
      // Page headers and footers are never a hit's text, not even between two of its own
      // paragraphs (the chunker passes over them, so a chunk's range can hold any number).
      if (!PAGE_FURNITURE.contains(item.label())) {
        available.put(item.position(), item);
      }
    }
    if (hit.sectionCost() - SEPARATOR.length() <= budgetChars) {
      return new Context(hit, available);
    }
    NavigableMap<Integer, Item> chosen = new TreeMap<>(
        available.subMap(hit.itemStart(), true, hit.itemEnd(), false));
    long used = 0;
    for (Item item : chosen.values()) {
      used += cost(item);
    }
    // The neighbours handed in are contiguous in reading order once furniture is left out.
    Integer before = available.lowerKey(hit.itemStart());
    Integer after = available.ceilingKey(hit.itemEnd());
    boolean afterTurn = true;
    while (before != null || after != null) {
      boolean takeAfter = after != null && (afterTurn || before == null);
      Integer position = takeAfter ? after : before;
      Item item = available.get(position);
      if (used + cost(item) - SEPARATOR.length() <= budgetChars) {
        chosen.put(position, item);
        used += cost(item);
        if (takeAfter) {
          after = available.higherKey(position);
        } else {
          before = available.lowerKey(position);
        }
      } else if (takeAfter) {
        after = null;
      } else {
        before = null;
      }
      afterTurn = !afterTurn;
    }
    return new Context(hit, chosen);
  }

  private static long cost(Item item) {
    return item.text().length() + SEPARATOR.length();
  }

  /** One result being built: the best hit's identity and the union of the items chosen. */
  private static final class Context {
    private final RankedHit best;
    private final NavigableMap<Integer, Item> items;
    private boolean merged;

    Context(RankedHit best, NavigableMap<Integer, Item> items) {
      this.best = best;
      this.items = items;
    }

    int start() {
      return items.isEmpty() ? best.itemStart() : Math.min(best.itemStart(), items.firstKey());
    }

    int end() {
      return items.isEmpty() ? best.itemEnd() : Math.max(best.itemEnd(), items.lastKey() + 1);
    }

    boolean overlaps(Context other) {
      // Without items there is no text to merge into, so such a hit stays on its own.
      if (items.isEmpty() || other.items.isEmpty() || !best.documentId().equals(other.best.documentId())) {
        return false;
      }
      return start() < other.end() && other.start() < end() || sharesPage(other)
          || continuesSection(other);
    }

    /**
     * Whether the two contexts are one section running over a page break: the same heading path on
     * consecutive pages. A filing's note or table that spans two pages is one place to look, and as
     * two results it pushed the next place out of the first three (BENCHMARKS.md, "Filings: session
     * 14"). Hits without a heading path never merge this way: an unnamed section is no evidence.
     */
    private boolean continuesSection(Context other) {
      if (best.headings().isEmpty() || !best.headings().equals(other.best.headings())) {
        return false;
      }
      Set<Integer> mine = pages();
      for (Integer page : other.pages()) {
        if (mine.contains(page - 1) || mine.contains(page + 1)) {
          return true;
        }
      }
      return false;
    }

    /**
     * Whether the two contexts' items share a page: two passages of one page are one place to look,
     * and as two results they took two of the limit's places where one does.
     */
    private boolean sharesPage(Context other) {
      Set<Integer> mine = pages();
      if (mine.isEmpty()) {
        return false;
      }
      for (Integer page : other.pages()) {
        if (mine.contains(page)) {
          return true;
        }
      }
      return false;
    }

    private Set<Integer> pages() {
      Set<Integer> out = new TreeSet<>();
      for (Item item : items.values()) {
        out.addAll(item.pageNumbers());
      }
      return out;
    }

    void absorb(Context other) {
      items.putAll(other.items);
      merged = true;
    }

    SearchHit toHit() {
      String text = String.join(SEPARATOR, items.values().stream().map(Item::text).toList());
      if (items.isEmpty() || (!merged && text.length() < ownTextLength(best.headings(), best.content()))) {
        // The chunk's own text is the floor: its items may render shorter than it (or be gone).
        return new SearchHit(best.chunkId(), best.content(), best.documentId(),
            best.documentTitle(), best.documentUri(), best.score(), best.pageNumbers(),
            best.headings(), best.docItemRefs(), best.labels());
      }
      Set<Integer> pages = new TreeSet<>();
      Set<String> labels = new LinkedHashSet<>();
      List<String> refs = new ArrayList<>(items.size());
      for (Map.Entry<Integer, Item> e : items.entrySet()) {
        pages.addAll(e.getValue().pageNumbers());
        labels.add(e.getValue().label());
        refs.add(e.getValue().selfRef());
      }
      return new SearchHit(best.chunkId(), text, best.documentId(), best.documentTitle(),
          best.documentUri(), best.score(), List.copyOf(pages), best.headings(), List.copyOf(refs),
          List.copyOf(labels));
    }
  }

  /**
   * The length of a chunk's text without the heading path the chunker puts in front of it for
   * embedding ("A > B" and a blank line): the expanded items carry their own headers.
   */
  static int ownTextLength(List<String> headings, String content) {
    String prefix = String.join(" > ", headings) + SEPARATOR;
    return !headings.isEmpty() && content.startsWith(prefix)
        ? content.length() - prefix.length()
        : content.length();
  }
}
