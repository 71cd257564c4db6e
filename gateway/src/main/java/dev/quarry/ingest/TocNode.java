package dev.quarry.ingest;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;

/**
 * One section of the table of contents: a {@code section_header} item and the items up to the next
 * header of the same or a higher level ({@code itemRange} = [start, endExclusive) in positions).
 */
public record TocNode(
    String selfRef,
    int level,
    String title,
    int position,
    List<Integer> pageNumbers,
    int start,
    int endExclusive,
    List<TocNode> children) {

  public TocNode {
    pageNumbers = List.copyOf(pageNumbers);
    children = List.copyOf(children);
  }

  /** The node exactly as toc.json of docs/CONTRACT.md spells it. */
  public JsonObject toJson() {
    JsonArray kids = new JsonArray();
    children.forEach(c -> kids.add(c.toJson()));
    return new JsonObject()
        .put("self_ref", selfRef)
        .put("level", level)
        .put("title", title)
        .put("position", position)
        .put("page_numbers", new JsonArray(List.copyOf(pageNumbers)))
        .put("item_range", new JsonArray().add(start).add(endExclusive))
        .put("children", kids);
  }
}
