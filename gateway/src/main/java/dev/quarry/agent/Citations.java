package dev.quarry.agent;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the analysis' code actually looked at: the documents of the search hits returned to it and
 * the document files it opened, in the order first seen. Thread-safe: search results arrive on
 * event loops, file reads on the sandbox's stream.
 */
final class Citations {
  private static final Pattern DOCUMENT_PATH = Pattern.compile(
      "^/documents/([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})(/.*)?$");

  /** One cited document; title and uri are null until known. */
  static final class Entry {
    final UUID documentId;
    String title;
    String uri;
    final Set<Integer> pages = new TreeSet<>();
    final Set<String> via = new TreeSet<>();
    final Set<String> chunks = new TreeSet<>();

    Entry(UUID documentId) {
      this.documentId = documentId;
    }
  }

  /**
   * The most documents cited through file reads alone. A read is the sandbox's own report, which
   * code that took over the runner can forge by the thousand; past this many, reads of further
   * documents are not cited (search hits, which the gateway made, always are).
   */
  static final int MAX_FILE_CITATIONS = 500;

  private final Map<UUID, Entry> entries = new LinkedHashMap<>();
  private final java.util.function.Predicate<UUID> inScope;
  private int fileOnly;

  /** {@code inScope}: whether a document is in the analysis' scope (a read outside it is not cited). */
  Citations(java.util.function.Predicate<UUID> inScope) {
    this.inScope = inScope;
  }

  Citations() {
    this(id -> true);
  }

  synchronized void searchHits(JsonArray hits) {
    for (Object o : hits) {
      if (!(o instanceof JsonObject hit)) {
        continue;
      }
      Entry e = entries.computeIfAbsent(UUID.fromString(hit.getString("document_id")), Entry::new);
      e.title = hit.getString("document_title");
      e.uri = hit.getString("document_uri");
      e.via.add("search");
      if (hit.getString("chunk_id") != null) {
        e.chunks.add(hit.getString("chunk_id"));
      }
      JsonArray pages = hit.getJsonArray("page_numbers");
      if (pages != null) {
        pages.forEach(p -> e.pages.add(((Number) p).intValue()));
      }
    }
  }

  /**
   * A path the code opened, as the sandbox reports it: cited once per document, only in the scope,
   * at most {@value #MAX_FILE_CITATIONS} documents seen only this way; anything that is not a
   * document's file is ignored. Whether the document exists is settled at the end
   * ({@link #describe}, {@link #dropUndescribed}).
   */
  synchronized void fileRead(String path) {
    if (path == null || path.length() > 1_000) {
      return;
    }
    Matcher m = DOCUMENT_PATH.matcher(path);
    if (!m.matches()) {
      return;
    }
    UUID id;
    try {
      id = UUID.fromString(m.group(1));
    } catch (IllegalArgumentException e) {
      return;
    }
    Entry e = entries.get(id);
    if (e == null) {
      if (fileOnly >= MAX_FILE_CITATIONS || !inScope.test(id)) {
        return;
      }
      fileOnly++;
      e = new Entry(id);
      entries.put(id, e);
    }
    e.via.add("file");
  }

  /**
   * Drops the documents seen only through files that {@link #describe} did not find: made-up ids,
   * or documents deleted since. Called once their lookup is done.
   */
  synchronized void dropUndescribed(Set<UUID> looked, Set<UUID> found) {
    entries.values().removeIf(e -> looked.contains(e.documentId) && !found.contains(e.documentId)
        && e.title == null && !e.via.contains("search"));
  }

  /** Documents seen only through files, whose title and uri still need looking up. */
  synchronized Set<UUID> untitled() {
    Set<UUID> out = new TreeSet<>();
    entries.values().stream().filter(e -> e.title == null).forEach(e -> out.add(e.documentId));
    return out;
  }

  synchronized void describe(UUID documentId, String title, String uri) {
    Entry e = entries.get(documentId);
    if (e != null) {
      e.title = title;
      e.uri = uri;
    }
  }

  synchronized JsonArray toJson() {
    JsonArray out = new JsonArray();
    for (Entry e : entries.values()) {
      out.add(new JsonObject()
          .put("document_id", e.documentId.toString())
          .put("title", e.title)
          .put("uri", e.uri)
          .put("pages", new JsonArray(java.util.List.copyOf(e.pages)))
          .put("chunk_ids", new JsonArray(java.util.List.copyOf(e.chunks)))
          .put("via", new JsonArray(java.util.List.copyOf(e.via))));
    }
    return out;
  }
}
