package dev.quarry.search;

import java.util.UUID;

/**
 * One chunk in a ranking, without context expansion: what retrieval benchmarks compare. The score's
 * scale depends on the mode (BM25, cosine similarity, or reciprocal-rank fusion).
 */
public record RankedChunk(UUID chunkId, UUID documentId, double score) {}
