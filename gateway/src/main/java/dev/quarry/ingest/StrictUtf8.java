package dev.quarry.ingest;

import dev.quarry.ingest.IngestException.Reason;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Decodes text sources as UTF-8 and refuses anything else: silently replacing bad bytes would index
 * mojibake that nobody can search for.
 */
final class StrictUtf8 {
  private StrictUtf8() {}

  static String decode(String fileName, byte[] bytes) throws IngestException {
    CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    String text;
    try {
      text = decoder.decode(ByteBuffer.wrap(bytes)).toString();
    } catch (CharacterCodingException e) {
      throw new IngestException(Reason.INVALID_ENCODING, fileName,
          "not valid UTF-8 (bad byte sequence near byte " + firstBadByte(bytes) + ")", e);
    }
    return text.startsWith("\uFEFF") ? text.substring(1) : text;
  }

  /** The offset of the first invalid sequence, so the user can find it. */
  private static int firstBadByte(byte[] bytes) {
    CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT);
    ByteBuffer in = ByteBuffer.wrap(bytes);
    java.nio.CharBuffer out = java.nio.CharBuffer.allocate(bytes.length + 1);
    decoder.decode(in, out, true);
    return in.position();
  }
}
