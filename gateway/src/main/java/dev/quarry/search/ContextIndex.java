package dev.quarry.search;

import dev.quarry.search.ContextExpander.Item;
import dev.quarry.search.ContextExpander.RankedHit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What context expansion reads of one tenant, as the database held it at one {@code term_version}:
 * each chunk's own fields, each document's title and uri, and each document's items with their
 * sections. With it, a search turns its fused ranking into hits with their items in memory,
 * exactly as the fused-hits statement of {@link SearchSql} does in the database (the same section,
 * the same items within reach of the budget, the same costs, in the same order), so a search whose
 * copies are current makes no statement after the query's model call. Immutable once built;
 * {@link ContextIndexes} keeps one per tenant and replaces it when the version moves.
 */
final class ContextIndex implements TenantCopies.Copy {
  /** One chunk's fields as a hit shows them. */
  private record ChunkRow(UUID document, int itemStart, int itemEnd, List<String> headings,
      String content, List<Integer> pageNumbers, List<String> docItemRefs, List<String> labels) {}

  /** One document: its title and uri, and its items in position order. */
  private record Doc(String title, String uri, int[] positions, Item[] items, int[] length,
      int[] sectionStart, int[] sectionEnd) {}

  final long version;
  private final Map<UUID, ChunkRow> chunks;
  private final Map<UUID, Doc> documents;
  private final long bytes;

  private ContextIndex(long version, Map<UUID, ChunkRow> chunks, Map<UUID, Doc> documents, long bytes) {
    this.version = version;
    this.chunks = chunks;
    this.documents = documents;
    this.bytes = bytes;
  }

  @Override
  public long version() {
    return version;
  }

  @Override
  public long bytes() {
    return bytes;
  }

  int chunks() {
    return chunks.size();
  }

  @Override
  public String toString() {
    return "hit contexts at version " + version + ": " + chunks.size() + " chunks, "
        + documents.size() + " documents";
  }

  /**
   * About what a copy takes: the text (a Java string never takes more bytes than the text's UTF-8,
   * which is what {@code textBytes} counts) and each row's objects.
   */
  static long estimateBytes(long chunks, long items, long documents, long textBytes) {
    return textBytes + chunks * 400 + items * 200 + documents * 300 + 65_536;
  }

  /**
   * The hits of {@code fused} (chunk ids and fused scores) with the items their contexts are drawn
   * from, best first (ties by chunk id in PostgreSQL's uuid order); chunks not in the copy are left
   * out, as the statement's join leaves out chunks deleted since the ranking.
   */
  List<RankedHit> hits(List<Fusion.Scored<UUID>> fused, int budgetChars) {
    List<Fusion.Scored<UUID>> order = new ArrayList<>(fused);
    order.sort((a, b) -> {
      int byScore = Double.compare(b.score(), a.score());
      return byScore != 0 ? byScore : TermIndex.compareUuids(a.id().getMostSignificantBits(),
          a.id().getLeastSignificantBits(), b.id().getMostSignificantBits(), b.id().getLeastSignificantBits());
    });
    List<RankedHit> out = new ArrayList<>(order.size());
    for (Fusion.Scored<UUID> f : order) {
      ChunkRow c = chunks.get(f.id());
      Doc d = c == null ? null : documents.get(c.document());
      if (d == null) {
        continue;
      }
      out.add(hit(f.id(), f.score(), c, d, budgetChars));
    }
    return out;
  }

  private static RankedHit hit(UUID id, double score, ChunkRow c, Doc d, int budget) {
    // The innermost section around the chunk's items (or the chunk's own range when it has none).
    int lo = lowerBound(d.positions(), c.itemStart());
    int hi = lowerBound(d.positions(), c.itemEnd());
    int secStart = c.itemStart();
    int secEnd = c.itemEnd();
    for (int k = lo; k < hi; k++) {
      secStart = Math.min(secStart, d.sectionStart()[k]);
      secEnd = Math.max(secEnd, d.sectionEnd()[k]);
    }
    int from = lowerBound(d.positions(), secStart);
    int to = lowerBound(d.positions(), secEnd);
    long sectionCost = 0;
    long[] cost = new long[to - from];
    for (int k = from; k < to; k++) {
      int position = d.positions()[k];
      boolean inHit = position >= c.itemStart() && position < c.itemEnd();
      cost[k - from] = !inHit && ContextExpander.FURNITURE.contains(d.items()[k].label()) ? 0 : d.length()[k] + 2L;
      sectionCost += cost[k - from];
    }
    boolean[] keep = new boolean[to - from];
    boolean whole = sectionCost <= budget + 2L;
    // Before the hit, nearest first; then the hit's own items; then after it, nearest first.
    long reach = 0;
    for (int k = lo - 1; k >= from; k--) {
      reach += cost[k - from];
      keep[k - from] = cost[k - from] > 0 && (whole || reach <= budget + 2L);
    }
    reach = 0;
    for (int k = from; k < to; k++) {
      int position = d.positions()[k];
      if (position >= c.itemStart() && position < c.itemEnd()) {
        keep[k - from] = true;
      } else if (position >= c.itemEnd()) {
        reach += cost[k - from];
        keep[k - from] = cost[k - from] > 0 && (whole || reach <= budget + 2L);
      }
    }
    List<Item> items = new ArrayList<>();
    for (int k = from; k < to; k++) {
      if (keep[k - from]) {
        items.add(d.items()[k]);
      }
    }
    return new RankedHit(id, score, c.document(), d.title(), d.uri(), c.itemStart(), c.itemEnd(),
        c.headings(), c.content(), c.pageNumbers(), c.docItemRefs(), c.labels(),
        items.isEmpty() ? 0 : sectionCost, List.copyOf(items));
  }

  /** The first index whose position is at least {@code position} (a document's positions are distinct). */
  private static int lowerBound(int[] positions, int position) {
    int found = Arrays.binarySearch(positions, position);
    return found >= 0 ? found : -found - 1;
  }

  /** Takes the rows in, documents first, then each document's items in order, then the chunks. */
  static final class Builder {
    private final long version;
    private long textBytes;
    private long itemCount;
    private final Map<UUID, String[]> titles = new HashMap<>();
    private final Map<UUID, List<Object[]>> items = new HashMap<>();
    private final Map<UUID, ChunkRow> chunks = new HashMap<>();

    Builder(long version) {
      this.version = version;
    }

    private void text(String s) {
      textBytes += TermIndex.utf8Length(s);
    }

    void document(UUID id, String title, String uri) {
      titles.put(id, new String[] {title, uri});
      text(title);
      text(uri);
    }

    void item(UUID document, int position, String selfRef, String label, String text,
        Integer[] pages, int sectionStart, int sectionEnd) {
      List<Object[]> of = items.computeIfAbsent(document, d -> new ArrayList<>());
      if (!of.isEmpty() && ((Item) of.get(of.size() - 1)[0]).position() >= position) {
        throw new IllegalStateException("items of " + document + " out of position order at " + position);
      }
      Item item = new Item(position, selfRef, label, text, List.of(pages));
      text(selfRef);
      text(label);
      text(text);
      textBytes += 4L * pages.length;
      itemCount++;
      of.add(new Object[] {item, text.codePointCount(0, text.length()), sectionStart, sectionEnd});
    }

    void chunk(UUID id, UUID document, int itemStart, int itemEnd, String[] headings, String content,
        Integer[] pages, String[] refs, String[] labels) {
      chunks.put(id, new ChunkRow(document, itemStart, itemEnd, List.of(headings), content,
          List.of(pages), List.of(refs), List.of(labels)));
      text(content);
      for (String s : headings) {
        text(s);
      }
      for (String s : refs) {
        text(s);
      }
      for (String s : labels) {
        text(s);
      }
      textBytes += 4L * pages.length;
    }

    ContextIndex build() {
      Map<UUID, Doc> documents = new HashMap<>();
      for (Map.Entry<UUID, String[]> t : titles.entrySet()) {
        List<Object[]> of = items.getOrDefault(t.getKey(), List.of());
        int n = of.size();
        int[] positions = new int[n];
        Item[] its = new Item[n];
        int[] length = new int[n];
        int[] start = new int[n];
        int[] end = new int[n];
        for (int k = 0; k < n; k++) {
          Object[] row = of.get(k);
          its[k] = (Item) row[0];
          positions[k] = its[k].position();
          length[k] = (Integer) row[1];
          start[k] = (Integer) row[2];
          end[k] = (Integer) row[3];
        }
        documents.put(t.getKey(), new Doc(t.getValue()[0], t.getValue()[1], positions, its, length,
            start, end));
      }
      return new ContextIndex(version, Map.copyOf(chunks), Map.copyOf(documents),
          estimateBytes(chunks.size(), itemCount, documents.size(), textBytes));
    }
  }
}
