package dev.quarry.store;

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
    OffsetDateTime updatedAt) {}
