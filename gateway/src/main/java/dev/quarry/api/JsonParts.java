package dev.quarry.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.vertx.core.buffer.Buffer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;

/**
 * A JSON document written with Jackson's generator a part at a time, for answers sent as their
 * client takes them ({@link ResponseStreams#pages}): each {@link #take} hands over what was written
 * since the last. Values that already have a wire form are written raw from it
 * ({@code WireFormat}'s objects, encoded by Vert.x with the same Jackson), so a streamed answer is
 * byte for byte the one encoded whole.
 */
final class JsonParts {
  private static final JsonFactory FACTORY = new JsonFactory();

  private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
  private final JsonGenerator json;

  JsonParts() {
    try {
      json = FACTORY.createGenerator(bytes);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The generator; it writes to memory, so its IOExceptions cannot happen (see {@link #write}). */
  JsonGenerator json() {
    return json;
  }

  /** Runs some writes on the generator. */
  JsonParts write(Writes writes) {
    try {
      writes.to(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return this;
  }

  /** What was written since the last take. */
  Buffer take() {
    try {
      json.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    Buffer out = Buffer.buffer(bytes.toByteArray());
    bytes.reset();
    return out;
  }

  /** Writes on a generator. */
  @FunctionalInterface
  interface Writes {
    void to(JsonGenerator json) throws IOException;
  }
}
