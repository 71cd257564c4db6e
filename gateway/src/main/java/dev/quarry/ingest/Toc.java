package dev.quarry.ingest;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.UUID;

/**
 * A document's section tree, plus for every item the innermost section that holds it (its item
 * range; the whole document for items outside any section) and that section's heading path.
 */
public record Toc(List<TocNode> tree, int[] sectionStart, int[] sectionEnd, List<List<String>> headingPaths) {

  public Toc {
    tree = List.copyOf(tree);
    headingPaths = List.copyOf(headingPaths);
  }

  /** toc.json of docs/CONTRACT.md. */
  public JsonObject toJson(UUID docId, String title) {
    JsonArray nodes = new JsonArray();
    tree.forEach(n -> nodes.add(n.toJson()));
    return new JsonObject().put("doc_id", docId.toString()).put("title", title).put("tree", nodes);
  }
}
