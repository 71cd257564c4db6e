package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * Builds the section tree of docs/CONTRACT.md from the items. Rules:
 * <ul>
 *   <li>every {@code section_header} item starts a node at its heading level (a header without a
 *       known level counts as level 1, so a document without levels gets a flat tree);
 *   <li>a node ends where the next header of the same or a higher (smaller) level starts;
 *   <li>a {@code title} item is not a node: it names the document, and it closes every open
 *       section, since nothing under a title can belong to the sections before it.
 * </ul>
 */
public final class TocBuilder {
  private TocBuilder() {}

  /** A node under construction: its end and children are only known later. */
  private static final class Open {
    final DocItem header;
    final int level;
    final List<TocNode> children = new ArrayList<>();
    final List<String> path;

    Open(DocItem header, int level, List<String> parentPath) {
      this.header = header;
      this.level = level;
      List<String> p = new ArrayList<>(parentPath);
      p.add(header.text().strip());
      this.path = List.copyOf(p);
    }

    TocNode close(int end) {
      return new TocNode(header.selfRef(), level, header.text().strip(), header.position(),
          header.pageNumbers(), header.position(), end, children);
    }
  }

  public static Toc build(List<DocItem> items) {
    int n = items.size();
    int[] start = new int[n];
    int[] end = new int[n];
    Open[] innermost = new Open[n];
    List<TocNode> roots = new ArrayList<>();
    Deque<Open> stack = new ArrayDeque<>();
    // Section ends are only known when the section closes; remember whose end to fill in then.
    Deque<List<Integer>> memberStack = new ArrayDeque<>();

    for (DocItem item : items) {
      int p = item.position();
      if (item.label().equals("section_header") || item.label().equals("title")) {
        int level = item.label().equals("title") ? 0 : Math.max(1, item.headingLevel());
        while (!stack.isEmpty() && stack.peek().level >= level) {
          closeTop(stack, memberStack, roots, p, end);
        }
        if (item.label().equals("section_header")) {
          List<String> parentPath = stack.isEmpty() ? List.of() : stack.peek().path;
          stack.push(new Open(item, level, parentPath));
          memberStack.push(new ArrayList<>());
        }
      }
      if (stack.isEmpty()) {
        start[p] = 0;
        end[p] = n;
      } else {
        innermost[p] = stack.peek();
        start[p] = stack.peek().header.position();
        memberStack.peek().add(p);
      }
    }
    while (!stack.isEmpty()) {
      closeTop(stack, memberStack, roots, n, end);
    }
    List<List<String>> paths = new ArrayList<>(n);
    for (int p = 0; p < n; p++) {
      paths.add(innermost[p] == null ? List.of() : innermost[p].path);
    }
    return new Toc(roots, start, end, paths);
  }

  private static void closeTop(Deque<Open> stack, Deque<List<Integer>> memberStack,
      List<TocNode> roots, int endExclusive, int[] end) {
    Open top = stack.pop();
    for (int member : memberStack.pop()) {
      end[member] = endExclusive;
    }
    TocNode node = top.close(endExclusive);
    if (stack.isEmpty()) {
      roots.add(node);
    } else {
      stack.peek().children.add(node);
    }
  }
}
