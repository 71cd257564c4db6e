package dev.quarry.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import dev.quarry.ingest.IngestRequest;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * The JSON form of an ingest, {@code {title, uri, content, content_type}}, read from a stream (the
 * body as {@link SpooledBody} kept it, in memory or in its file) with Jackson's streaming parser:
 * nothing but the four fields' strings is kept, where decoding the body whole held it three times
 * over (the bytes, the tree, the text). The answers are those of
 * {@code Requests.ingest(Requests.jsonObject(body))}, in the same order: a body that is not JSON,
 * then one that is not an object, then a field named twice, then a NUL character, then the fields.
 * The parser's limits are Jackson's defaults, as Vert.x's decoder has them (a string of at most
 * 20,000,000 characters, nesting at most 1,000 deep).
 */
final class IngestJson {
  private static final JsonFactory FACTORY = new JsonFactory();
  private static final Set<String> FIELDS = Set.of("content", "title", "uri", "content_type");
  /** A field given, but not as a string or null. */
  private static final Object NOT_A_STRING = new Object();

  private IngestJson() {}

  /** Reads the body; blocking. Every refusal is an {@link ApiError} (400). */
  static IngestRequest read(InputStream body) throws IOException {
    IngestJson.Reader reader = new Reader();
    try (JsonParser parser = FACTORY.createParser(body)) {
      reader.read(parser);
    } catch (JsonProcessingException e) {
      throw malformed("Failed to decode:" + e.getMessage());
    }
    if (!reader.object) {
      throw ApiError.badRequest("malformed_json", "the request body must be a JSON object");
    }
    if (reader.duplicate != null) {
      throw ApiError.badRequest("duplicate_field", "field '" + reader.duplicate + "' appears twice in one object;"
          + " which one was meant cannot be told");
    }
    if (reader.nul != null) {
      throw ApiError.badRequest("nul_character", "field '" + reader.nul + "' contains a NUL character (\\u0000),"
          + " which no text field can hold");
    }
    String content = string(reader.fields, "content");
    if (content == null) {
      throw ApiError.badRequest("missing_content", "field 'content' is required (or upload a file as multipart field 'file')");
    }
    return Requests.ingest(content, string(reader.fields, "title"), string(reader.fields, "uri"),
        string(reader.fields, "content_type"));
  }

  private static String string(Map<String, Object> fields, String field) {
    Object value = fields.get(field);
    if (value == NOT_A_STRING) {
      throw ApiError.badRequest("invalid_" + field, "field '" + field + "' must be a string");
    }
    return (String) value;
  }

  private static ApiError malformed(String message) {
    int nl = message.indexOf('\n');
    return ApiError.badRequest("malformed_json", "the request body is not valid JSON: "
        + (nl < 0 ? message : message.substring(0, nl)));
  }

  /** Where a value sits, for a NUL's message ({@code a.b[2]}); rendered only when one is found. */
  private record Where(Where parent, String name, int index) {
    String render() {
      String up = parent == null ? "" : parent.render();
      if (name == null) {
        return up + "[" + index + "]";
      }
      return up.isEmpty() ? name : up + "." + name;
    }
  }

  /** One pass over the tokens: the top-level fields, the first field named twice, the first NUL. */
  private static final class Reader {
    boolean object;
    String duplicate;
    String nul;
    final Map<String, Object> fields = new HashMap<>();

    void read(JsonParser p) throws IOException {
      JsonToken first = p.nextToken();
      if (first == null) {
        throw malformed("Failed to decode:No content to map due to end-of-input");
      }
      object = first == JsonToken.START_OBJECT;
      value(p, first, null, true);
      if (p.nextToken() != null) {
        throw malformed("Unexpected trailing token");
      }
    }

    private void value(JsonParser p, JsonToken token, Where where, boolean top) throws IOException {
      switch (token) {
        case START_OBJECT -> object(p, where, top);
        case START_ARRAY -> {
          int i = 0;
          for (JsonToken t = p.nextToken(); t != JsonToken.END_ARRAY; t = p.nextToken()) {
            value(p, t, new Where(where, null, i++), false);
          }
        }
        case VALUE_STRING -> {
          if (nul == null && hasNul(p)) {
            nul = where == null ? "" : where.render();
          }
        }
        default -> { }
      }
    }

    private void object(JsonParser p, Where where, boolean top) throws IOException {
      Set<String> names = new HashSet<>();
      for (JsonToken t = p.nextToken(); t != JsonToken.END_OBJECT; t = p.nextToken()) {
        String name = p.currentName();
        if (!names.add(name) && duplicate == null) {
          duplicate = name;
        }
        Where field = new Where(where, name, 0);
        if (nul == null && name.indexOf('\0') >= 0) {
          nul = field.render().replace("\0", "\\u0000");
        }
        JsonToken value = p.nextToken();
        if (top && FIELDS.contains(name)) {
          fields.put(name, switch (value) {
            case VALUE_STRING -> p.getText();
            case VALUE_NULL -> null;
            default -> NOT_A_STRING;
          });
        }
        value(p, value, field, false);
      }
    }

    /** Whether the current string holds U+0000, read without making a String of it. */
    private static boolean hasNul(JsonParser p) throws IOException {
      char[] chars = p.getTextCharacters();
      int end = p.getTextOffset() + p.getTextLength();
      for (int i = p.getTextOffset(); i < end; i++) {
        if (chars[i] == '\0') {
          return true;
        }
      }
      return false;
    }
  }
}
