package dev.quarry.search;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.UUID;

/** One search result, with exactly the keys docs/CONTRACT.md promises (snake_case on the wire). */
public record SearchHit(
    UUID chunkId,
    String content,
    UUID documentId,
    String documentTitle,
    String documentUri,
    double score,
    List<Integer> pageNumbers,
    List<String> headings,
    List<String> docItemRefs,
    List<String> labels) {

  /** The hit as the sandbox's {@code search()} returns it: the docs/CONTRACT.md keys, nothing else. */
  public JsonObject toJson() {
    return new JsonObject()
        .put("chunk_id", chunkId.toString())
        .put("content", content)
        .put("document_id", documentId.toString())
        .put("document_title", documentTitle)
        .put("document_uri", documentUri)
        .put("score", score)
        .put("page_numbers", new JsonArray(List.copyOf(pageNumbers)))
        .put("headings", new JsonArray(List.copyOf(headings)))
        .put("doc_item_refs", new JsonArray(List.copyOf(docItemRefs)))
        .put("labels", new JsonArray(List.copyOf(labels)));
  }
}
