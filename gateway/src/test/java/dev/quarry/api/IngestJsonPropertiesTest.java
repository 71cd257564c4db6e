package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.ingest.IngestRequest;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The JSON form of an ingest read with the streaming parser ({@link IngestJson}) answers as decoding
 * the body whole did (Vert.x's decoder, then the checks of {@code Requests.jsonObject} and the
 * fields'), for generated bodies: objects whose fields repeat, hold NUL characters, lone surrogates,
 * escapes and nested values, other JSON values, and all of these cut short or with a character
 * put in anywhere. Same request, or same error code and message.
 */
@Label("The streamed JSON ingest body answers as the whole-body decoding did")
class IngestJsonPropertiesTest {
  private static final List<String> NAMES = List.of("content", "title", "uri", "content_type", "extra", "a\\u0000b");

  /** What decoding the body whole made of it: a request, or "code: message". */
  static Object whole(byte[] body) {
    try {
      JsonObject o = Requests.jsonObject(Buffer.buffer(body));
      String content = string(o, "content");
      if (content == null) {
        throw ApiError.badRequest("missing_content", "field 'content' is required (or upload a file as multipart field 'file')");
      }
      return show(Requests.ingest(content, string(o, "title"), string(o, "uri"), string(o, "content_type")));
    } catch (ApiError e) {
      return e.code() + ": " + e.getMessage();
    }
  }

  /** The whole-body rule of a field: absent or null is none, a string is it, anything else is refused. */
  private static String string(JsonObject body, String field) {
    Object value = body.getValue(field);
    if (value != null && !(value instanceof String)) {
      throw ApiError.badRequest("invalid_" + field, "field '" + field + "' must be a string");
    }
    return (String) value;
  }

  static Object streamed(byte[] body) {
    try {
      return show(IngestJson.read(new ByteArrayInputStream(body)));
    } catch (ApiError e) {
      return e.code() + ": " + e.getMessage();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String show(IngestRequest r) {
    return "request " + List.of(r.fileName(), r.uri(), String.valueOf(r.title()), String.valueOf(r.contentType()),
        Arrays.toString(r.bytes()));
  }

  @Property(tries = 1500)
  void sameAnswers(@ForAll("bodies") String body) {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    assertThat(streamed(bytes)).as(body).isEqualTo(whole(bytes));
  }

  @Example
  void knownCases() {
    for (String body : List.of("{\"content\": \"x\"}", "   ", "{", "[1,", "{\"a\":1} x", "{\"a\":1}{}", "null", "\"x\"",
        "{\"content\": 1}", "{\"content\": null}", "{\"title\": \"t\"}", "{\"content\": \"a\", \"content\": \"b\"}",
        "{\"x\": {\"y\": [\"\\u0000\"]}, \"content\": \"c\"}", "{\"a\\u0000\": 1, \"content\": \"c\"}",
        "{\"content\": \"\\ud800 lone\"}", "{\"content\": \"x\", \"uri\": \"u\", \"title\": \"t\", \"content_type\": \"text/plain\"}",
        "{\"content\": \"x\"} ", "{\"a\": NaN}", "{\"a\": 01}", "{\"content\": \"x\", \"n\": 1e999}")) {
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      assertThat(streamed(bytes)).as(body).isEqualTo(whole(bytes));
    }
  }

  @Provide
  Arbitrary<String> bodies() {
    Arbitrary<String> document = Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(8, object(3)),
        net.jqwik.api.Tuple.of(1, value(2)));
    return Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(6, document),
        net.jqwik.api.Tuple.of(2, Combinators.combine(document, Arbitraries.integers().between(0, 1000))
            .as((d, at) -> d.substring(0, Math.min(d.length(), at % (d.length() + 1))))),
        net.jqwik.api.Tuple.of(2, Combinators.combine(document, Arbitraries.integers().between(0, 1000),
                Arbitraries.of("}", "]", ",", ":", "\"", "x", " ", "{", "\\", "1"))
            .as((d, at, c) -> {
              int i = at % (d.length() + 1);
              return d.substring(0, i) + c + d.substring(i);
            })))
        .filter(b -> !b.isEmpty());
  }

  private Arbitrary<String> string() {
    Arbitrary<String> piece = Arbitraries.of("a", "é", "🦆", "\\\"", "\\\\", "\\n", "\\u0000", "\\ud800", "\\udc00",
        "\\ud83e\\udd86", "\\u00e9", " ", "content");
    return piece.list().ofMaxSize(6).map(p -> "\"" + String.join("", p) + "\"");
  }

  private Arbitrary<String> value(int depth) {
    Arbitrary<String> scalar = Arbitraries.oneOf(string(), Arbitraries.of("1", "-2.5", "true", "false", "null", "1e5"));
    if (depth == 0) {
      return scalar;
    }
    return Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(5, scalar),
        net.jqwik.api.Tuple.of(1, object(depth - 1)),
        net.jqwik.api.Tuple.of(1, Arbitraries.lazy(() -> value(depth - 1)).list().ofMaxSize(3)
            .map(vs -> "[" + String.join(", ", vs) + "]")));
  }

  private Arbitrary<String> object(int depth) {
    Arbitrary<String> field = Combinators.combine(Arbitraries.of(NAMES), Arbitraries.lazy(() -> value(depth)))
        .as((name, v) -> "\"" + name + "\": " + v);
    return field.list().ofMaxSize(5).map(fs -> "{" + String.join(", ", fs) + "}");
  }
}
