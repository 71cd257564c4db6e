package dev.quarry.sandbox;

import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.util.Map;

/**
 * What the record of a callback keeps of its arguments: a bounded preview, never the arguments
 * themselves. A sandbox may send up to the stream's message size (16 MB) per call, many times a
 * second; the record of each call must cost the same few hundred characters whatever it sent.
 */
public record CallbackArguments(JsonObject preview, int chars, boolean cut) {
  /** The most characters of one argument's value kept in a preview. */
  public static final int VALUE_CHARS = 200;
  /** The most arguments (keys) kept in a preview; the runner's calls have at most two. */
  public static final int KEYS = 4;
  private static final int KEY_CHARS = 40;
  /**
   * Arguments longer than this are previewed as text, not parsed: the gateway refuses such a call
   * unparsed ({@link GrpcSandboxSession#MAX_CALLBACK_ARGUMENT_CHARS}), and a sandbox may send 16 MB.
   */
  static final int PARSED_CHARS = GrpcSandboxSession.MAX_CALLBACK_ARGUMENT_CHARS;

  /**
   * A preview of a call's arguments: the JSON object with each string cut to {@value #VALUE_CHARS}
   * characters, other values (numbers, booleans) as they are and nested ones as their cut JSON text,
   * at most {@value #KEYS} keys (arguments that are not a JSON object: {@code {"unparsed": cut text}}),
   * with the length of the whole arguments' JSON and whether anything was cut. At most about a
   * kilobyte whatever {@code json} holds.
   */
  public static CallbackArguments of(String json) {
    String raw = json == null ? "" : json;
    if (raw.length() > PARSED_CHARS) {
      // Not parsed for a preview, as the call itself is not: parsing 16 MB only to cut it would cost
      // that much garbage each time. Its start, as text, is the preview.
      return new CallbackArguments(new JsonObject().put("unparsed", cut(raw, VALUE_CHARS)), raw.length(), true);
    }
    JsonObject parsed;
    try {
      parsed = raw.isBlank() ? new JsonObject() : new JsonObject(raw);
    } catch (DecodeException | ClassCastException e) {
      return new CallbackArguments(new JsonObject().put("unparsed", cut(raw, VALUE_CHARS)), raw.length(), true);
    }
    JsonObject out = new JsonObject();
    boolean cut = false;
    int keys = 0;
    for (Map.Entry<String, Object> e : parsed) {
      if (keys++ >= KEYS) {
        cut = true;
        break;
      }
      String key = cut(e.getKey(), KEY_CHARS);
      cut |= key.length() < e.getKey().length();
      Object v = e.getValue();
      if (v == null || v instanceof Number || v instanceof Boolean) {
        out.put(key, v);
        continue;
      }
      String text = v instanceof String s ? s : io.vertx.core.json.Json.encode(v);
      String kept = cut(text, VALUE_CHARS);
      cut |= kept.length() < text.length() || !(v instanceof String);
      out.put(key, kept);
    }
    return new CallbackArguments(out, raw.length(), cut);
  }

  /** The first {@code max} characters of {@code s}, not splitting a surrogate pair. */
  static String cut(String s, int max) {
    if (s.length() <= max) {
      return s;
    }
    int end = Character.isHighSurrogate(s.charAt(max - 1)) ? max - 1 : max;
    return s.substring(0, end);
  }
}
