package dev.quarry.ingest;

import dev.quarry.store.DocItem;

import com.fasterxml.jackson.core.JacksonException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.quarry.ingest.IngestException.Reason;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Imports a DoclingDocument (docling's own JSON export) as items. The body tree is walked depth
 * first, which is docling's reading order; every item keeps docling's {@code self_ref} so that
 * references in search hits point back into the original document.
 */
public final class DoclingJsonConverter implements Converter {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern REF = Pattern.compile("#/([a-z_]+)/(\\d+)");
  private static final Set<String> ITEM_ARRAYS =
      Set.of("texts", "tables", "pictures", "groups", "key_value_items", "form_items");
  /** Far deeper than any real document; bounds the recursion on hostile input. */
  private static final int MAX_DEPTH = 200;

  /**
   * What a token of Jackson's tree may cost: an object node with its map, an array node with its
   * list, a text node with its string's header (its characters are counted apart).
   */
  static final int TOKEN_BYTES = 100;

  @Override
  public ConvertedDocument convert(String fileName, byte[] bytes, IngestBudget budget)
      throws IngestException {
    JsonNode root;
    try {
      chargeTree(bytes, budget);
      root = JSON.readTree(bytes);
    } catch (JacksonException e) {
      throw new IngestException(Reason.MALFORMED, fileName,
          "not valid JSON: " + e.getOriginalMessage(), e);
    } catch (IOException e) {
      throw new IngestException(Reason.MALFORMED, fileName, "unreadable JSON: " + e.getMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new IngestException(Reason.MALFORMED, fileName, "not a DoclingDocument: not a JSON object");
    }
    JsonNode schema = root.get("schema_name");
    if (schema != null && !"DoclingDocument".equals(schema.asText())) {
      throw new IngestException(Reason.MALFORMED, fileName,
          "not a DoclingDocument: schema_name is '" + schema.asText() + "'");
    }
    if (!root.path("body").isObject()) {
      throw new IngestException(Reason.MALFORMED, fileName, "not a DoclingDocument: no 'body' tree");
    }
    Walker walker = new Walker(fileName, root, budget);
    List<Walked> body = walker.walk(root.get("body"));
    List<Walked> furniture =
        root.path("furniture").isObject() ? walker.walk(root.get("furniture")) : List.of();
    List<Walked> ordered = interleave(body, furniture);

    List<DocItem> items = new ArrayList<>(ordered.size());
    for (Walked w : ordered) {
      budget.item(w.text);
      items.add(new DocItem(items.size(), w.selfRef, w.label, w.text, w.pages, w.headingLevel, w.depth));
    }
    return new ConvertedDocument(title(root, body, fileName), SourceType.DOCLING, items);
  }

  /**
   * Charges the tree Jackson will build of {@code bytes} before it is built: one streaming pass
   * counts its tokens and the characters of its strings (no tree is kept).
   */
  private static void chargeTree(byte[] bytes, IngestBudget budget) throws IOException {
    long tokens = 0;
    long chars = 0;
    try (com.fasterxml.jackson.core.JsonParser p = JSON.getFactory().createParser(bytes)) {
      for (com.fasterxml.jackson.core.JsonToken t = p.nextToken(); t != null; t = p.nextToken()) {
        tokens++;
        if (t == com.fasterxml.jackson.core.JsonToken.VALUE_STRING
            || t == com.fasterxml.jackson.core.JsonToken.FIELD_NAME) {
          chars += p.getTextLength();
        }
        if ((tokens & 4095) == 0) {
          budget.tick();
        }
      }
    }
    budget.memory(TOKEN_BYTES * tokens + 2 * chars, "the JSON's tree");
  }

  /** An item as found in the tree, before it gets its position. */
  private record Walked(
      String selfRef, String label, String text, List<Integer> pages, int headingLevel, int depth,
      boolean furnitureLayer) {}

  private static String title(JsonNode root, List<Walked> body, String fileName) {
    Walked header = null;
    for (Walked w : body) {
      if (w.furnitureLayer || w.text.isBlank()) {
        continue;
      }
      if (w.label.equals("title")) {
        return w.text.strip();
      }
      if (header == null && w.label.equals("section_header")) {
        header = w;
      }
    }
    if (header != null) {
      return header.text.strip();
    }
    String name = root.path("name").asText("");
    return name.isBlank() ? fileName : name;
  }

  /**
   * Puts the furniture tree's items next to the body items of their page: headers before the first
   * body item of the page, footers after its last one. Furniture without a page goes first (headers)
   * or last (footers).
   */
  private static List<Walked> interleave(List<Walked> body, List<Walked> furniture) {
    if (furniture.isEmpty()) {
      return body;
    }
    List<Walked> headers = new ArrayList<>();
    List<Walked> footers = new ArrayList<>();
    for (Walked f : furniture) {
      (f.label.equals("page_footer") || f.label.equals("footnote") ? footers : headers).add(f);
    }
    int[] keyPage = new int[body.size()];
    int last = 0;
    for (int i = 0; i < body.size(); i++) {
      if (!body.get(i).pages.isEmpty()) {
        last = body.get(i).pages.get(0);
      }
      keyPage[i] = last;
    }
    List<Walked> out = new ArrayList<>(body.size() + furniture.size());
    int h = 0;
    int f = 0;
    for (int i = 0; i < body.size(); i++) {
      while (h < headers.size() && firstPage(headers.get(h)) <= keyPage[i]) {
        out.add(headers.get(h++));
      }
      out.add(body.get(i));
      boolean pageEnds = i + 1 == body.size() || keyPage[i + 1] > keyPage[i];
      while (pageEnds && f < footers.size() && firstPage(footers.get(f)) <= keyPage[i]) {
        out.add(footers.get(f++));
      }
    }
    out.addAll(headers.subList(h, headers.size()));
    out.addAll(footers.subList(f, footers.size()));
    return out;
  }

  private static int firstPage(Walked w) {
    return w.pages.isEmpty() ? 0 : w.pages.get(0);
  }

  /** Depth-first walk over refs, with the checks that keep a hostile document from looping. */
  private static final class Walker {
    private final String fileName;
    private final JsonNode root;
    private final Set<String> seen = new HashSet<>();
    private final IngestBudget budget;

    Walker(String fileName, JsonNode root, IngestBudget budget) {
      this.fileName = fileName;
      this.root = root;
      this.budget = budget;
    }

    List<Walked> walk(JsonNode tree) throws IngestException {
      List<Walked> out = new ArrayList<>();
      children(tree, 0, out);
      return out;
    }

    private void children(JsonNode node, int depth, List<Walked> out) throws IngestException {
      JsonNode children = node.get("children");
      if (children == null || children.isNull()) {
        return;
      }
      if (!children.isArray()) {
        throw malformed("'children' of " + node.path("self_ref").asText("?") + " is not a list");
      }
      for (JsonNode child : children) {
        String ref = child.path("$ref").asText("");
        visit(ref, resolve(ref), depth, out);
      }
    }

    private void visit(String ref, JsonNode node, int depth, List<Walked> out) throws IngestException {
      if (!seen.add(ref)) {
        throw malformed(ref + " is reached twice in the tree (a cycle or a shared child)");
      }
      if (depth > MAX_DEPTH) {
        throw malformed("the tree is nested deeper than " + MAX_DEPTH + " levels at " + ref);
      }
      String kind = ref.substring(2, ref.lastIndexOf('/'));
      String label = node.path("label").asText("");
      boolean furniture = "furniture".equals(node.path("content_layer").asText());
      if (kind.equals("groups")) {
        if (label.equals("inline")) {
          inline(ref, node, depth, out, furniture);
        } else {
          children(node, depth + 1, out);
        }
        return;
      }
      switch (kind) {
        case "texts" -> {
          int level = 0;
          if (label.equals("section_header")) {
            level = Math.clamp(node.path("level").asInt(1), 1, 6);
          }
          JsonNode inline = leadingInlineGroup(node);
          if (label.equals("list_item") && text(node).isBlank() && inline != null) {
            listItemWithInlineText(ref, node, inline, depth, out, furniture);
            return;
          }
          out.add(new Walked(ref, label, text(node), pages(node), level, depth, furniture));
        }
        case "tables" -> out.add(new Walked(ref, label.isEmpty() ? "table" : label,
            grid(ref, node), pages(node), 0, depth, furniture));
        case "pictures" -> out.add(new Walked(ref, label.isEmpty() ? "picture" : label,
            captions(node), pages(node), 0, depth, furniture));
        default -> out.add(new Walked(ref, label, "", pages(node), 0, depth, furniture));
      }
      children(node, depth + 1, out);
    }

    /** The first child of {@code node} when it is an inline group, else null. */
    private JsonNode leadingInlineGroup(JsonNode node) throws IngestException {
      JsonNode first = node.path("children").path(0);
      String ref = first.path("$ref").asText("");
      if (!ref.startsWith("#/groups/")) {
        return null;
      }
      JsonNode group = resolve(ref);
      return group.path("label").asText("").equals("inline") ? group : null;
    }

    /**
     * Docling leaves a list item with links empty and puts its words in an inline group below it;
     * the words belong to the list item, so the item takes the group's text (keeping its own
     * self_ref) and the group gives no item of its own.
     */
    private void listItemWithInlineText(
        String ref, JsonNode node, JsonNode group, int depth, List<Walked> out, boolean furniture)
        throws IngestException {
      String groupRef = group.path("self_ref").asText();
      if (!seen.add(groupRef)) {
        throw malformed(groupRef + " is reached twice in the tree (a cycle or a shared child)");
      }
      List<Walked> parts = new ArrayList<>();
      inline(groupRef, group, depth, parts, furniture);
      Walked joined = parts.get(0);
      TreeSet<Integer> pages = new TreeSet<>(pages(node));
      pages.addAll(joined.pages);
      out.add(new Walked(ref, "list_item", joined.text, List.copyOf(pages), 0, depth, furniture));
      out.addAll(parts.subList(1, parts.size()));
      JsonNode children = node.path("children");
      for (int i = 1; i < children.size(); i++) {
        String childRef = children.get(i).path("$ref").asText("");
        visit(childRef, resolve(childRef), depth + 1, out);
      }
    }

    /**
     * Docling splits a paragraph with links or emphasis into an inline group of fragments; the
     * fragments only make sense together, so they become one text item named after the group.
     */
    private void inline(String ref, JsonNode node, int depth, List<Walked> out, boolean furniture)
        throws IngestException {
      List<Walked> parts = new ArrayList<>();
      children(node, depth + 1, parts);
      StringBuilder text = new StringBuilder();
      TreeSet<Integer> pages = new TreeSet<>();
      List<Walked> others = new ArrayList<>();
      for (Walked p : parts) {
        pages.addAll(p.pages);
        if (p.selfRef.startsWith("#/texts/") || p.selfRef.startsWith("#/groups/")) {
          if (!p.text.isBlank()) {
            if (!text.isEmpty()) {
              text.append(' ');
            }
            text.append(p.text.strip());
          }
        } else {
          others.add(p);
        }
      }
      out.add(new Walked(ref, "text", text.toString(), List.copyOf(pages), 0, depth, furniture));
      out.addAll(others);
    }

    private JsonNode resolve(String ref) throws IngestException {
      Matcher m = REF.matcher(ref);
      if (!m.matches() || !ITEM_ARRAYS.contains(m.group(1))) {
        throw malformed("bad reference '" + ref + "'");
      }
      JsonNode array = root.path(m.group(1));
      int index;
      try {
        index = Integer.parseInt(m.group(2));
      } catch (NumberFormatException e) {
        throw malformed("dangling reference " + ref);
      }
      JsonNode node = array.isArray() ? array.get(index) : null;
      if (node == null || !node.isObject()) {
        throw malformed("dangling reference " + ref + " (no such item)");
      }
      String selfRef = node.path("self_ref").asText(ref);
      if (!selfRef.equals(ref)) {
        throw malformed(ref + " points at an item whose self_ref is " + selfRef);
      }
      return node;
    }

    private String text(JsonNode node) {
      JsonNode t = node.get("text");
      if (t == null || t.isNull()) {
        t = node.get("orig");
      }
      return t == null || t.isNull() ? "" : t.asText();
    }

    private String captions(JsonNode node) throws IngestException {
      StringBuilder sb = new StringBuilder();
      for (JsonNode c : node.path("captions")) {
        String text = text(resolve(c.path("$ref").asText(""))).strip();
        // A caption may be referenced from any number of pictures: each copy is text built.
        budget.text(text.length(), "captions");
        if (!text.isEmpty()) {
          if (!sb.isEmpty()) {
            sb.append(' ');
          }
          sb.append(text);
        }
      }
      return sb.toString();
    }

    private List<Integer> pages(JsonNode node) {
      TreeSet<Integer> pages = new TreeSet<>();
      for (JsonNode p : node.path("prov")) {
        int page = p.path("page_no").asInt(0);
        if (page > 0) {
          pages.add(page);
        }
      }
      return List.copyOf(pages);
    }

    /**
     * Docling's grid already repeats a merged cell in every slot it spans; without a grid the
     * cells are placed by their offsets, repeating spans the same way. Either way as Markdown, laid
     * out on the conversion's budget (a grid of one wide row and many empty ones is as wide in
     * every row, and a declared size or a span is checked before any slot of it is written).
     */
    private String grid(String ref, JsonNode table) throws IngestException {
      JsonNode data = table.path("data");
      TableGrid grid = new TableGrid(budget);
      JsonNode rows = data.get("grid");
      if (rows != null && rows.isArray() && !rows.isEmpty()) {
        for (JsonNode row : rows) {
          int r = grid.addRow();
          for (JsonNode cell : row) {
            grid.append(r, cell.path("text").asText(""), 1);
          }
        }
        return grid.markdown();
      }
      int numRows = data.path("num_rows").asInt(0);
      int numCols = data.path("num_cols").asInt(0);
      if (numRows < 0 || numCols < 0) {
        throw malformed(ref + " declares an impossible size " + numRows + "x" + numCols);
      }
      grid.ensure(numRows, numCols);
      for (JsonNode cell : data.path("table_cells")) {
        int r0 = cell.path("start_row_offset_idx").asInt(0);
        int r1 = cell.path("end_row_offset_idx").asInt(r0 + 1);
        int c0 = cell.path("start_col_offset_idx").asInt(0);
        int c1 = cell.path("end_col_offset_idx").asInt(c0 + 1);
        String text = cell.path("text").asText("");
        for (int r = Math.max(0, r0); r < Math.min(r1, numRows); r++) {
          for (int c = Math.max(0, c0); c < Math.min(c1, numCols); c++) {
            grid.set(r, c, text);
          }
        }
      }
      return grid.markdown();
    }

    private IngestException malformed(String detail) {
      return new IngestException(Reason.MALFORMED, fileName, detail);
    }
  }
}
