package dev.quarry.search;

import java.util.List;
import java.util.UUID;

/** One search result, with exactly the keys CONTRACT.md promises (snake_case on the wire). */
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
    List<String> labels) {}
