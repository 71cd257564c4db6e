package dev.quarry.api;

import dev.quarry.ingest.IngestResult;
import dev.quarry.search.SearchHit;
import dev.quarry.store.DocumentSummary;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Locale;

/** The JSON shapes of the API: snake_case keys, in the order CONTRACT.md lists them. */
final class WireFormat {
  private WireFormat() {}

  static JsonObject document(DocumentSummary d) {
    return new JsonObject()
        .put("id", d.id().toString())
        .put("title", d.title())
        .put("uri", d.uri())
        .put("source_type", d.sourceType())
        .put("byte_size", d.byteSize())
        .put("item_count", d.itemCount())
        .put("chunk_count", d.chunkCount())
        .put("version", d.version())
        .put("created_at", d.createdAt().toString())
        .put("updated_at", d.updatedAt().toString());
  }

  static JsonObject documents(List<DocumentSummary> documents) {
    JsonArray array = new JsonArray();
    documents.forEach(d -> array.add(document(d)));
    return new JsonObject().put("documents", array);
  }

  static JsonObject ingested(IngestResult r) {
    return new JsonObject()
        .put("id", r.documentId().toString())
        .put("status", r.status().name().toLowerCase(Locale.ROOT))
        .put("title", r.title())
        .put("source_type", r.sourceType())
        .put("item_count", r.itemCount())
        .put("chunk_count", r.chunkCount());
  }

  static JsonObject results(List<SearchHit> hits) {
    JsonArray array = new JsonArray();
    hits.forEach(h -> array.add(h.toJson()));
    return new JsonObject().put("results", array);
  }

  static JsonObject error(ApiError e) {
    return new JsonObject()
        .put("error", new JsonObject().put("code", e.code()).put("message", e.getMessage()));
  }
}
