package dev.quarry.api;

import dev.quarry.config.HostPaths;
import dev.quarry.ingest.IngestResult;
import dev.quarry.search.SearchHit;
import dev.quarry.store.DocumentStore;
import dev.quarry.store.DocumentSummary;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.UUID;

/** The JSON shapes of the API: snake_case keys, in the order docs/CONTRACT.md lists them. */
final class WireFormat {
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(WireFormat.class);

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

  /** A page of GET /v1/documents; {@code next_cursor} is null at the listing's end. */
  static JsonObject documents(DocumentStore.Page page) {
    JsonArray array = new JsonArray();
    page.documents().forEach(d -> array.add(document(d)));
    return new JsonObject().put("documents", array)
        .put("next_cursor", page.next() == null ? null : cursor(page.next()));
  }

  private static final String CURSOR_PREFIX = "d1:";

  /** Opaque to clients: the position's instant (to the nanosecond) and id, base64url. */
  static String cursor(DocumentStore.ListPosition position) {
    Instant at = position.createdAt().toInstant();
    String plain = CURSOR_PREFIX + at.getEpochSecond() + ":" + at.getNano() + ":" + position.id();
    return Base64.getUrlEncoder().withoutPadding().encodeToString(plain.getBytes(StandardCharsets.UTF_8));
  }

  /** The position a {@link #cursor} names, or empty when the text is not one. */
  static Optional<DocumentStore.ListPosition> position(String cursor) {
    try {
      String plain = new String(Base64.getUrlDecoder().decode(cursor), StandardCharsets.UTF_8);
      if (!plain.startsWith(CURSOR_PREFIX)) {
        return Optional.empty();
      }
      String[] parts = plain.substring(CURSOR_PREFIX.length()).split(":", -1);
      if (parts.length != 3) {
        return Optional.empty();
      }
      Instant at = Instant.ofEpochSecond(Long.parseLong(parts[0]), Long.parseLong(parts[1]));
      UUID id = UUID.fromString(parts[2]);
      if (!id.toString().equals(parts[2])) {
        return Optional.empty();
      }
      return Optional.of(new DocumentStore.ListPosition(at.atOffset(ZoneOffset.UTC), id));
    } catch (IllegalArgumentException | java.time.DateTimeException | ArithmeticException e) {
      return Optional.empty();
    }
  }

  static JsonObject ingested(IngestResult r) {
    return new JsonObject()
        .put("id", r.documentId().toString())
        .put("status", r.status().name().toLowerCase(Locale.ROOT))
        .put("title", r.title())
        .put("source_type", r.sourceType())
        .put("item_count", r.itemCount())
        .put("chunk_count", r.chunkCount())
        .put("undecodable_chars", r.undecodableChars())
        .put("undecodable_pages", undecodablePages(r));
  }

  /** {@code [{"page", "chars"}, …]} in page order, pages with nothing dropped left out. */
  private static JsonArray undecodablePages(IngestResult r) {
    JsonArray pages = new JsonArray();
    new java.util.TreeMap<>(r.undecodablePages()).forEach((page, chars) ->
        pages.add(new JsonObject().put("page", page).put("chars", chars)));
    return pages;
  }

  static JsonObject results(List<SearchHit> hits) {
    JsonArray array = new JsonArray();
    hits.forEach(h -> array.add(h.toJson()));
    return new JsonObject().put("results", array);
  }

  static JsonObject error(ApiError e) {
    return new JsonObject()
        .put("error", new JsonObject().put("code", e.code()).put("message", message(e)));
  }

  /**
   * An error's message as a client may read it: without host paths (HostPaths), whatever the
   * part that made it put in. One that held any is logged whole, for the operator, and as a
   * message to fix where it is made.
   */
  static String message(ApiError e) {
    String m = e.getMessage();
    String shown = HostPaths.redact(m);
    if (shown != null && !shown.equals(m)) {
      log.warn("an error message held host paths, which the client was not shown ({} {}): {}", e.status(), e.code(), m);
    }
    return shown;
  }

  /**
   * The same error in OpenAI's shape, for the OpenAI-compatible surface: {@code message},
   * {@code type} (OpenAI's classes, by status), {@code param} and {@code code}; an analysis that
   * ended without an answer adds its id and error type under {@code quarry}.
   */
  static JsonObject openAiError(ApiError e) {
    String type = switch (e.status()) {
      case 401 -> "authentication_error";
      case 403 -> "permission_error";
      case 404 -> e.code().equals("model_not_found") ? "invalid_request_error" : "not_found_error";
      case 429 -> "rate_limit_error";
      default -> e.status() >= 500 ? "server_error" : "invalid_request_error";
    };
    JsonObject body = new JsonObject().put("error", new JsonObject().put("message", message(e)).put("type", type)
        .put("param", e.param()).put("code", e.code()));
    if (e.analysisId() != null) {
      body.put("quarry", new JsonObject().put("analysis_id", e.analysisId()).put("error_type", e.analysisError()));
    }
    return body;
  }
}
