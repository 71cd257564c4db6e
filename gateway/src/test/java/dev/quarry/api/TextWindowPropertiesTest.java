package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * MCP's read_document keeps a window of a text as it arrives ({@link TextWindow}): whatever the
 * text (multi-byte characters, surrogate pairs, malformed bytes) and however it is cut into parts,
 * the window and the count are those of decoding the whole and taking a substring, as it did.
 */
@Label("A window read as the text arrives is the substring of the whole")
class TextWindowPropertiesTest {
  @Property(tries = 2000)
  void sameAsSubstring(@ForAll("texts") byte[] bytes, @ForAll("cuts") List<Integer> cuts,
      @ForAll @IntRange(max = 400) int offset, @ForAll @IntRange(min = 1, max = 400) int max) {
    String whole = new String(bytes, StandardCharsets.UTF_8);
    TextWindow window = new TextWindow(offset, max);
    int at = 0;
    for (int cut : cuts) {
      int end = Math.min(bytes.length, at + cut);
      window.add(Buffer.buffer(java.util.Arrays.copyOfRange(bytes, at, end)));
      at = end;
    }
    window.add(Buffer.buffer(java.util.Arrays.copyOfRange(bytes, at, bytes.length)));
    window.finish();
    int from = Math.min(offset, whole.length());
    int to = Math.min(whole.length(), from + max);
    assertThat(window.total()).isEqualTo(whole.length());
    assertThat(window.text()).isEqualTo(whole.substring(from, to));
  }

  @Provide
  Arbitrary<byte[]> texts() {
    Arbitrary<byte[]> piece = Arbitraries.of("a", "é", "€", "🦆", "\n", "\"", "x y").map(s -> s.getBytes(StandardCharsets.UTF_8));
    Arbitrary<byte[]> broken = Arbitraries.of(new byte[] {(byte) 0xC3}, new byte[] {(byte) 0xF0, (byte) 0x9F},
        new byte[] {(byte) 0xFF}, new byte[] {(byte) 0xED, (byte) 0xA0, (byte) 0x80});
    return Arbitraries.frequencyOf(net.jqwik.api.Tuple.of(9, piece), net.jqwik.api.Tuple.of(1, broken))
        .list().ofMaxSize(300).map(parts -> {
          java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
          parts.forEach(out::writeBytes);
          return out.toByteArray();
        });
  }

  @Provide
  Arbitrary<List<Integer>> cuts() {
    return Arbitraries.integers().between(0, 40).list().ofMaxSize(40);
  }
}
