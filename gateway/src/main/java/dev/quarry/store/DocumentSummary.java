package dev.quarry.store;

import io.vertx.core.json.JsonObject;
import java.time.OffsetDateTime;
import java.util.UUID;

/** A document's metadata, as listed by the API. */
public record DocumentSummary(
    UUID id,
    String title,
    String uri,
    String sourceType,
    String contentHash,
    long byteSize,
    int itemCount,
    int chunkCount,
    int version,
    OffsetDateTime createdAt,
    OffsetDateTime updatedAt) {
  /** The keys of metadata.json and of list_documents() (docs/CONTRACT.md), created_at as a UTC instant. */
  public JsonObject metadataJson() {
    return new JsonObject()
        .put("id", id.toString())
        .put("title", title)
        .put("uri", uri)
        .put("created_at", createdAt.toInstant().toString());
  }
}
