package dev.quarry.api;

import dev.quarry.ingest.IngestRequest;
import dev.quarry.config.Config;
import dev.quarry.search.QueryRules;
import dev.quarry.search.SearchRequest;
import dev.quarry.store.DocumentStore;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.exc.StreamReadException;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Turns request bodies and path parameters into the services' records. Every rejection is an
 * {@link ApiError} that names the field and what is wrong with it.
 */
final class Requests {
  // UUID.fromString accepts forms like "1-2-3-4-5"; ids on the wire are the canonical form only.
  private static final Pattern CANONICAL_UUID =
      Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");

  private Requests() {}

  static UUID documentId(String raw) {
    return uuid("document id", raw);
  }

  /** {@code what} names the id in the message (an over-long one is cut: it is echoed back). */
  static UUID uuid(String what, String raw) {
    if (raw == null || !CANONICAL_UUID.matcher(raw).matches()) {
      String shown = raw == null ? "" : raw.length() > 80 ? raw.substring(0, 80) + "…" : raw;
      throw ApiError.badRequest("invalid_id", what + " '" + shown + "' is not a UUID");
    }
    return UUID.fromString(raw);
  }

  /**
   * The query parameter {@code limit}: {@code absent} when it is not given, else an integer within
   * [1, max].
   */
  static Integer limit(String raw, Integer absent, int max) {
    if (raw == null) {
      return absent;
    }
    int limit;
    try {
      limit = Integer.parseInt(raw.strip());
    } catch (NumberFormatException e) {
      String shown = raw.length() > 40 ? raw.substring(0, 40) + "…" : raw;
      throw ApiError.badRequest("invalid_limit", "query parameter 'limit' must be an integer, got '" + shown + "'");
    }
    if (limit < 1 || limit > max) {
      throw ApiError.badRequest("invalid_limit", "query parameter 'limit' must be between 1 and " + max
          + ", got " + limit);
    }
    return limit;
  }

  /** The query parameter {@code cursor} of GET /v1/documents: null when absent. */
  static DocumentStore.ListPosition documentsCursor(String raw) {
    if (raw == null) {
      return null;
    }
    return WireFormat.position(raw).orElseThrow(() -> ApiError.badRequest("invalid_cursor",
        "query parameter 'cursor' is not a next_cursor that GET /v1/documents returned"));
  }

  static JsonObject jsonObject(Buffer body) {
    if (body == null || body.length() == 0) {
      throw ApiError.badRequest("malformed_json", "the request body is empty; expected a JSON object");
    }
    Object value;
    try {
      value = io.vertx.core.json.Json.decodeValue(body);
    } catch (DecodeException e) {
      throw ApiError.badRequest("malformed_json", "the request body is not valid JSON: " + firstLine(e.getMessage()));
    }
    if (!(value instanceof JsonObject object)) {
      throw ApiError.badRequest("malformed_json", "the request body must be a JSON object");
    }
    String duplicate = duplicateKey(body);
    if (duplicate != null) {
      throw ApiError.badRequest("duplicate_field", "field '" + duplicate + "' appears twice in one object;"
          + " which one was meant cannot be told");
    }
    String withNul = nulAt(object, "");
    if (withNul != null) {
      throw ApiError.badRequest("nul_character", "field '" + withNul + "' contains a NUL character (\\u0000),"
          + " which no text field can hold");
    }
    return object;
  }

  /** Reads JSON tokens only, refusing an object that names a field twice. */
  private static final JsonFactory STRICT = JsonFactory.builder()
      .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build();

  /**
   * The first field named twice in one object of a body already known to be valid JSON, or null.
   * A parser keeps the last one and a proxy or a client library may keep the first, so a body
   * like {@code {"limit": 1, "limit": 1000}} would mean different things to different readers.
   */
  private static String duplicateKey(Buffer body) {
    try (JsonParser parser = STRICT.createParser(body.getBytes())) {
      while (parser.nextToken() != null) {
        // tokens only: the duplicate check is the parser's own
      }
      return null;
    } catch (StreamReadException e) {
      String name = null;
      try {
        name = e.getProcessor() instanceof JsonParser p ? p.currentName() : null;
      } catch (java.io.IOException ignored) {
        // the name is a nicety; the refusal stands
      }
      return name == null ? "?" : name;
    } catch (java.io.IOException e) {
      return null; // not a read failure of the body's text: Vert.x has decoded it already
    }
  }

  /**
   * The first field (a dotted path) whose name or string value holds U+0000, or null. PostgreSQL's
   * text and jsonb cannot store it, so it would fail deep inside (a 500) wherever it went.
   */
  private static String nulAt(Object value, String path) {
    if (value instanceof String s) {
      return s.indexOf('\0') >= 0 ? path : null;
    }
    if (value instanceof JsonObject o) {
      for (var e : o) {
        String field = path.isEmpty() ? e.getKey() : path + "." + e.getKey();
        String found = e.getKey().indexOf('\0') >= 0 ? field.replace("\0", "\\u0000") : nulAt(e.getValue(), field);
        if (found != null) {
          return found;
        }
      }
    } else if (value instanceof io.vertx.core.json.JsonArray a) {
      for (int i = 0; i < a.size(); i++) {
        String found = nulAt(a.getValue(i), path + "[" + i + "]");
        if (found != null) {
          return found;
        }
      }
    }
    return null;
  }

  /**
   * The body of POST /v1/search. The JSON types are checked here; what the query and the limit must
   * be is {@link QueryRules}', worded as for every other way a search arrives.
   */
  static SearchRequest search(JsonObject body, Config config) {
    Object rawQuery = body.getValue("query");
    if (!(rawQuery instanceof String query)) {
      throw ApiError.badRequest("invalid_query", rawQuery == null
          ? "field 'query' is required"
          : "field 'query' must be a string");
    }
    Object rawLimit = body.getValue("limit");
    if (rawLimit != null && !(rawLimit instanceof Integer || rawLimit instanceof Long)) {
      throw ApiError.badRequest("invalid_limit", "field 'limit' must be an integer, got " + rawLimit);
    }
    long limit = rawLimit == null ? config.searchDefaultLimit() : ((Number) rawLimit).longValue();
    QueryRules.of(config).check(query, limit).ifPresent(p -> {
      throw ApiError.badRequest(p.argument() == QueryRules.Argument.QUERY ? "invalid_query" : "invalid_limit",
          p.message());
    });
    return new SearchRequest(query, (int) limit, documentIds(body.getValue("document_ids")));
  }

  static Set<UUID> documentIds(Object raw) {
    if (raw == null) {
      return Set.of();
    }
    if (!(raw instanceof JsonArray array)) {
      throw ApiError.badRequest("invalid_document_ids", "field 'document_ids' must be a list of document ids");
    }
    if (array.size() > SearchRequest.MAX_DOCUMENT_IDS) {
      throw ApiError.badRequest("invalid_document_ids", "field 'document_ids' has " + array.size()
          + " ids; at most " + SearchRequest.MAX_DOCUMENT_IDS + " are allowed (omit it to search all documents)");
    }
    Set<UUID> ids = new LinkedHashSet<>(array.size());
    for (int i = 0; i < array.size(); i++) {
      Object element = array.getValue(i);
      if (!(element instanceof String s) || !CANONICAL_UUID.matcher(s).matches()) {
        throw ApiError.badRequest("invalid_document_ids",
            "field 'document_ids[" + i + "]' = " + element + " is not a UUID");
      }
      ids.add(UUID.fromString(s));
    }
    return ids;
  }

  /**
   * The JSON form of an ingest, {title, uri, content, content_type}, as {@link IngestJson} read it.
   * Without a {@code uri} the document's is made from its content ({@code content:sha256:} and 16 hex digits of the hash of its
   * bytes): the uri is a document's identity (sending one again replaces it), and the title, or one
   * fixed name, made every document sent without a uri replace the one before (red team round 5, R5-9).
   */
  static IngestRequest ingest(String content, String title, String uri, String contentType) {
    String fileName = uri != null ? uri : title != null ? title : "content";
    byte[] bytes = withoutLoneSurrogates(content).getBytes(StandardCharsets.UTF_8);
    return new IngestRequest(fileName, uri != null ? uri : contentUri(bytes), title, contentType, bytes);
  }

  /** The uri of a document sent without one: its content's, so only the same bytes share it. */
  static String contentUri(byte[] bytes) {
    try {
      byte[] hash = java.security.MessageDigest.getInstance("SHA-256").digest(bytes);
      return "content:sha256:" + java.util.HexFormat.of().formatHex(hash, 0, 8);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /**
   * {@code text} with each lone surrogate (JSON's {@code "\ud800"} escapes can spell them) as
   * U+FFFD: UTF-8 has no encoding for them, and Java's encoder would quietly write '?', which then
   * reads as text; U+FFFD is what the ingest's hygiene rule drops and counts as undecodable.
   */
  static String withoutLoneSurrogates(String text) {
    StringBuilder out = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      boolean paired = Character.isHighSurrogate(c) && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1));
      if (paired) {
        if (out != null) {
          out.append(c).append(text.charAt(i + 1));
        }
        i++;
      } else if (Character.isSurrogate(c)) {
        if (out == null) {
          out = new StringBuilder(text.length()).append(text, 0, i);
        }
        out.append('\uFFFD');
      } else if (out != null) {
        out.append(c);
      }
    }
    return out == null ? text : out.toString();
  }

  private static String optionalString(JsonObject body, String field) {
    Object value = body.getValue(field);
    if (value != null && !(value instanceof String)) {
      throw ApiError.badRequest("invalid_" + field, "field '" + field + "' must be a string");
    }
    return (String) value;
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    int nl = message.indexOf('\n');
    return nl < 0 ? message : message.substring(0, nl);
  }
}
