package dev.quarry.store;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * One document item, exactly as a line of {@code items.jsonl} in docs/CONTRACT.md.
 *
 * @param position 0, 1, 2, … in reading order
 * @param selfRef the DoclingDocument reference: {@code #/texts/N}, {@code #/tables/N},
 *     {@code #/pictures/N} or {@code #/groups/N}
 * @param label a DoclingDocument label ({@code title}, {@code section_header}, {@code text},
 *     {@code list_item}, {@code table}, {@code caption}, {@code picture}, …)
 * @param text the rendered content; a table is a Markdown table
 * @param pageNumbers 1-based pages, empty for sources without pages
 * @param headingLevel 1–6 on {@code section_header} items, 0 otherwise
 * @param treeDepth nesting depth in the document tree (0 for body children)
 */
public record DocItem(
    int position,
    String selfRef,
    String label,
    String text,
    List<Integer> pageNumbers,
    int headingLevel,
    int treeDepth) {

  public DocItem {
    pageNumbers = List.copyOf(pageNumbers);
  }

  /** The item as a line of items.jsonl: exactly docs/CONTRACT.md's fields, snake_case. */
  public JsonObject toJson() {
    return new JsonObject()
        .put("position", position)
        .put("self_ref", selfRef)
        .put("label", label)
        .put("text", text)
        .put("page_numbers", new JsonArray(List.copyOf(pageNumbers)))
        .put("heading_level", headingLevel)
        .put("tree_depth", treeDepth);
  }

  public boolean isHeader() {
    return label.equals("section_header") || label.equals("title");
  }

  /** Furniture that must not eat a context budget. */
  public boolean isFurniture() {
    return label.equals("page_header") || label.equals("page_footer") || label.equals("footnote");
  }
}
