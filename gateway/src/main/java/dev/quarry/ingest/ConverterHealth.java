package dev.quarry.ingest;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Whether each format still converts on this gateway. A library's static initialiser that fails
 * (an {@link OutOfMemoryError} inside it, say) leaves its class unusable for the life of the
 * process: the red team's first DOCX upload ran the heap out while XMLBeans' schema types or the
 * JDK's XML character tables were being initialised, and from then on every DOCX of every tenant
 * failed with {@code NoClassDefFoundError}, a 500, until a restart. So: each format's sample
 * ({@link ConverterSamples}) is converted before the gateway serves, which runs those initialisers
 * while the heap is empty; after a conversion runs out of memory its format's sample is converted
 * again; and a format whose sample no longer converts (or whose conversion met a {@link
 * LinkageError}) is reported here, so that {@code /readyz} fails naming it and its uploads are
 * refused with a 503 instead of a 500 each.
 */
public final class ConverterHealth {
  private static final Logger LOG = LoggerFactory.getLogger(ConverterHealth.class);

  private final Map<SourceType, String> broken = new ConcurrentHashMap<>();
  private volatile Map<SourceType, ConverterSamples.Sample> samples;
  private volatile boolean checked;

  /** Why {@code type} does not convert on this gateway, or null when it does (as far as known). */
  public String problem(SourceType type) {
    return broken.get(type);
  }

  /**
   * Null when every format converted its sample; otherwise what is wrong, naming each format. Before
   * {@link #checkAll} has run, that it has not.
   */
  public String problem() {
    if (!checked) {
      return "the converters have not converted their samples yet";
    }
    if (broken.isEmpty()) {
      return null;
    }
    StringBuilder sb = new StringBuilder();
    new EnumMap<>(broken).forEach((type, why) -> sb.append(sb.isEmpty() ? "" : "; ").append(type.wireName())
        .append(": ").append(why));
    return sb.toString();
  }

  /** Converts every format's sample (blocking: start-up calls it on a worker). */
  public void checkAll(Converters converters) {
    for (SourceType type : SourceType.values()) {
      check(converters, type);
    }
    checked = true;
  }

  /**
   * Converts {@code type}'s sample again, after a conversion of that format ran out of memory: a
   * failure now (other than running out of memory again, which says nothing about the converter)
   * marks the format broken.
   */
  void check(Converters converters, SourceType type) {
    ConverterSamples.Sample sample;
    try {
      sample = samples().get(type);
      converters.converter(type).convert(sample.fileName(), sample.bytes());
      if (broken.remove(type) != null) {
        LOG.info("the {} converter converts its sample again", type.wireName());
      }
    } catch (OutOfMemoryError e) {
      LOG.warn("could not check the {} converter: out of memory again", type.wireName());
    } catch (Throwable e) {
      markBroken(type, e);
    }
  }

  /** Marks {@code type} broken by {@code cause}. */
  void markBroken(SourceType type, Throwable cause) {
    String why = cause.getClass().getSimpleName() + (cause.getMessage() == null ? "" : ": " + cause.getMessage());
    if (broken.put(type, why) == null) {
      LOG.error("the {} converter no longer converts its sample; /readyz fails until the gateway restarts",
          type.wireName(), cause);
    }
  }

  private Map<SourceType, ConverterSamples.Sample> samples() {
    Map<SourceType, ConverterSamples.Sample> s = samples;
    if (s == null) {
      s = ConverterSamples.all();
      samples = s;
    }
    return s;
  }
}
