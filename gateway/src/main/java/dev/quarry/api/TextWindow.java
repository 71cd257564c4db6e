package dev.quarry.api;

import io.vertx.core.buffer.Buffer;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Some characters of a UTF-8 text read as it arrives, and how many it has in all: what MCP's
 * {@code read_document} needs of a document's text or items, without holding the rest (it held the
 * whole answer, tens of megabytes for a large document, for each call). Characters count as Java's
 * do (UTF-16 units), malformed bytes read as U+FFFD, as decoding the whole did.
 */
final class TextWindow {
  private final long from;
  private final long to;
  private final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
      .onMalformedInput(CodingErrorAction.REPLACE).onUnmappableCharacter(CodingErrorAction.REPLACE);
  private final StringBuilder kept = new StringBuilder();
  /** Bytes of a character split between two parts, waiting for the rest of it. */
  private ByteBuffer carry = ByteBuffer.allocate(0);
  private long seen;

  /** Keeps the characters from {@code offset}, at most {@code max} of them. */
  TextWindow(long offset, long max) {
    this.from = offset;
    this.to = offset + max;
  }

  /** The next part of the text. */
  void add(Buffer part) {
    ByteBuffer in = ByteBuffer.allocate(carry.remaining() + part.length());
    in.put(carry).put(part.getBytes()).flip();
    decode(in, false);
    carry = in.slice();
  }

  /** The text has ended. */
  TextWindow finish() {
    decode(carry, true);
    CharBuffer out = CharBuffer.allocate(8);
    decoder.flush(out);
    keep(out.flip());
    return this;
  }

  /** How many characters the text has in all (once finished). */
  long total() {
    return seen;
  }

  /** The characters kept. */
  String text() {
    return kept.toString();
  }

  private void decode(ByteBuffer in, boolean last) {
    CharBuffer out = CharBuffer.allocate(in.remaining() + 2);
    decoder.decode(in, out, last);
    keep(out.flip());
  }

  private void keep(CharBuffer chars) {
    int n = chars.remaining();
    long start = Math.max(from, seen);
    long end = Math.min(to, seen + n);
    if (start < end) {
      kept.append(chars, (int) (start - seen), (int) (end - seen));
    }
    seen += n;
  }
}
