package dev.quarry.ingest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.ingest.IngestException.Reason;
import java.nio.charset.StandardCharsets;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A library left half initialised (an {@link OutOfMemoryError} inside a static initialiser) made
 * every later DOCX a {@code NoClassDefFoundError}, a 500, until a restart. Now: the samples convert
 * at start-up; after running out of memory the format's sample is converted again; a format that no
 * longer converts is named by {@link ConverterHealth#problem()} ({@code /readyz}) and its uploads
 * are refused as {@link Reason#CONVERTER_UNAVAILABLE} (503), not 500.
 */
@DisplayName("ConverterHealth: a format that no longer converts fails readiness, naming it, and is a 503")
class ConverterHealthTest {
  @Test
  @DisplayName("every real converter converts its sample (tables with spans, math, text boxes, a ruled PDF table)")
  void samplesConvert() throws Exception {
    Converters converters = new Converters(50L << 20);
    assertThat(converters.health().problem()).contains("not converted their samples yet");
    converters.health().checkAll(converters);
    assertThat(converters.health().problem()).isNull();
    for (Map.Entry<SourceType, ConverterSamples.Sample> e : ConverterSamples.all().entrySet()) {
      ConverterSamples.Sample s = e.getValue();
      assertThat(converters.detect(s.fileName(), null, s.bytes())).as(s.fileName()).isEqualTo(e.getKey());
      List<dev.quarry.store.DocItem> items = converters.convertClean(e.getKey(), s.fileName(), s.bytes())
          .document().items();
      assertThat(items).as(s.fileName()).hasSizeGreaterThanOrEqualTo(2);
      if (e.getKey() != SourceType.TEXT) {
        // Each sample reaches its format's table code, where the grids are built.
        assertThat(items).as(s.fileName()).anyMatch(it -> it.label().equals("table"));
      }
    }
  }

  /** A converter that runs out of memory on "oom", and fails its sample once {@code broken} is set. */
  private static Converters withFailingText(AtomicBoolean broken) {
    Converter text = new TextConverter();
    Converter failing = (name, bytes, budget) -> {
      if (new String(bytes, StandardCharsets.UTF_8).startsWith("oom")) {
        throw new OutOfMemoryError("Java heap space");
      }
      if (broken.get()) {
        throw new NoClassDefFoundError("Could not initialize class org.example.SchemaTypes");
      }
      return text.convert(name, bytes, budget);
    };
    Map<SourceType, Converter> all = new EnumMap<>(SourceType.class);
    all.put(SourceType.TEXT, failing);
    all.put(SourceType.MARKDOWN, new MarkdownConverter());
    all.put(SourceType.HTML, new HtmlConverter());
    all.put(SourceType.DOCLING, new DoclingJsonConverter());
    all.put(SourceType.DOCX, new DocxConverter());
    all.put(SourceType.PDF, new PdfConverter());
    return new Converters(1 << 20, all);
  }

  @Test
  @DisplayName("after an OutOfMemoryError the sample converts again: the format stays ready")
  void oomThenFine() {
    AtomicBoolean broken = new AtomicBoolean();
    Converters converters = withFailingText(broken);
    converters.health().checkAll(converters);
    assertThatThrownBy(() -> converters.convertClean(SourceType.TEXT, "big.txt", "oom".getBytes()))
        .isInstanceOfSatisfying(IngestException.class, e -> assertThat(e.reason()).isEqualTo(Reason.TOO_LARGE));
    assertThat(converters.health().problem()).isNull();
  }

  @Test
  @DisplayName("after an OutOfMemoryError that left a class unusable, the format is named and refused with 503")
  void oomLeavesItBroken() throws Exception {
    AtomicBoolean broken = new AtomicBoolean();
    Converters converters = withFailingText(broken);
    converters.health().checkAll(converters);
    broken.set(true); // what the OOM did to a static initialiser
    assertThatThrownBy(() -> converters.convertClean(SourceType.TEXT, "big.txt", "oom".getBytes()))
        .isInstanceOfSatisfying(IngestException.class, e -> assertThat(e.reason()).isEqualTo(Reason.TOO_LARGE));
    assertThat(converters.health().problem()).startsWith("text: NoClassDefFoundError: Could not initialize class");
    assertThatThrownBy(() -> converters.convertClean(SourceType.TEXT, "later.txt", "fine".getBytes()))
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.CONVERTER_UNAVAILABLE);
          assertThat(e.getMessage()).startsWith("later.txt: ").contains("no longer works", "send the file again");
        });
    // The other formats still convert.
    assertThat(converters.convertClean(SourceType.MARKDOWN, "ok.md", "fine".getBytes()).document().items())
        .extracting(it -> it.text()).isEqualTo(List.of("fine"));
  }

  @Test
  @DisplayName("a LinkageError met in a conversion marks its format at once, and the ingest is a 503 naming it")
  void linkageError() {
    AtomicBoolean broken = new AtomicBoolean();
    Converters converters = withFailingText(broken);
    converters.health().checkAll(converters);
    broken.set(true);
    assertThatThrownBy(() -> converters.convertClean(SourceType.TEXT, "a.txt", "fine".getBytes()))
        .isInstanceOfSatisfying(IngestException.class, e -> {
          assertThat(e.reason()).isEqualTo(Reason.CONVERTER_UNAVAILABLE);
          assertThat(e.getMessage()).contains("cannot be converted as text", "NoClassDefFoundError");
        });
    assertThat(converters.health().problem()).startsWith("text: ");
  }
}
