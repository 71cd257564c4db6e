package dev.quarry.ingest;

import dev.quarry.ingest.IngestException.Reason;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.util.Map;
import org.apache.pdfbox.cos.COSDictionary;
import org.apache.pdfbox.cos.COSName;
import org.apache.pdfbox.filter.DecodeOptions;
import org.apache.pdfbox.filter.DecodeResult;
import org.apache.pdfbox.filter.Filter;
import org.apache.pdfbox.filter.FilterFactory;

/**
 * The bound on what PDFBox decodes. PDFBox 3 decodes a stream (a font program, a form, an object
 * stream while loading, an inline image's data) whole into memory, with no limit: 600 KB of Flate
 * data that inflates to 600 MB took the heap (a font) or allocated 1.2 GB (a form, an inline
 * image). Each of PDFBox's filters is wrapped here, once for the process, so that every decode
 * counts what it writes: a stream may decode to at most {@link #maxStreamBytes} (16 bytes a byte of
 * source, at least 16 MiB), and what all decodes write is charged to the conversion's budget,
 * which the converting thread binds with {@link #bind}. Past either, the decode stops with an
 * {@link IngestBudget.Exceeded}; where PDFBox catches the error and goes on (a font it cannot
 * load), the conversion still fails, at its end, with the refusal.
 *
 * <p>PDFBox offers no way to register a filter: its {@code FilterFactory} keeps them in a private
 * map, which is read here once by reflection. A PDFBox that changes it fails {@link #install()},
 * and with it the PDF sample's conversion at start-up ({@link ConverterHealth}), so the gateway is
 * not ready instead of unbounded; {@code PdfStreamsTest} holds the bound.
 */
final class PdfStreams {
  /** The budget of the conversion running on this thread, while it runs ({@link #bind}). */
  private static final ThreadLocal<IngestBudget> BUDGET = new ThreadLocal<>();

  /** The most one stream may decode to, whatever the size of its source. */
  static final long FREE_STREAM_BYTES = 16L << 20;
  /** What one stream may decode to per byte of its PDF, past {@link #FREE_STREAM_BYTES}. */
  static final int STREAM_BYTES_PER_SOURCE_BYTE = 16;
  /** What a byte of an object stream costs once PDFBox has parsed its objects. */
  static final int OBJECT_STREAM_RATE = 16;
  /** Charged to the budget in steps of this many decoded bytes. */
  private static final int CHARGE_STEP = 64 * 1024;

  private static final boolean INSTALLED = install();

  private PdfStreams() {}

  /** Makes sure the filters are wrapped (the first call does it). */
  static void installed() {
    if (!INSTALLED) {
      throw new IllegalStateException("PDFBox's filters are not bounded");
    }
  }

  /** Binds {@code budget} to this thread until the returned binding is closed. */
  static Binding bind(IngestBudget budget) {
    installed();
    IngestBudget before = BUDGET.get();
    BUDGET.set(budget);
    return () -> {
      if (before == null) {
        BUDGET.remove();
      } else {
        BUDGET.set(before);
      }
    };
  }

  /** A budget bound to the thread; closing it restores what was bound before. */
  interface Binding extends AutoCloseable {
    @Override
    void close();
  }

  /** The most one stream of a PDF of {@code sourceBytes} may decode to. */
  static long maxStreamBytes(long sourceBytes) {
    return Math.max(FREE_STREAM_BYTES, IngestBudget.saturatedTimes(STREAM_BYTES_PER_SOURCE_BYTE, sourceBytes));
  }

  @SuppressWarnings("unchecked")
  private static boolean install() {
    try {
      Field field = FilterFactory.class.getDeclaredField("filters");
      field.setAccessible(true);
      Map<COSName, Filter> filters = (Map<COSName, Filter>) field.get(FilterFactory.INSTANCE);
      synchronized (filters) {
        filters.replaceAll((name, filter) -> filter instanceof Bounded ? filter : new Bounded(name, filter));
      }
      return true;
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new IllegalStateException("cannot bound PDFBox's filters: " + e, e);
    }
  }

  /** One of PDFBox's filters, counting what it decodes. */
  private static final class Bounded extends Filter {
    private final COSName name;
    private final Filter filter;

    Bounded(COSName name, Filter filter) {
      this.name = name;
      this.filter = filter;
    }

    @Override
    public DecodeResult decode(InputStream encoded, OutputStream decoded, COSDictionary parameters, int index)
        throws IOException {
      return filter.decode(encoded, new Counting(decoded, name, parameters), parameters, index);
    }

    @Override
    public DecodeResult decode(InputStream encoded, OutputStream decoded, COSDictionary parameters, int index,
        DecodeOptions options) throws IOException {
      return filter.decode(encoded, new Counting(decoded, name, parameters), parameters, index, options);
    }

    @Override
    protected void encode(InputStream input, OutputStream encoded, COSDictionary parameters) throws IOException {
      filter.encode(input, encoded, parameters, 0);
    }
  }

  /** Counts one decode's output against the stream bound and the bound conversion's budget. */
  private static final class Counting extends FilterOutputStream {
    private final COSName filter;
    private final IngestBudget budget;
    private final long max;
    private final int rate;
    private long written;
    private long charged;

    Counting(OutputStream out, COSName filter, COSDictionary stream) {
      super(out);
      this.filter = filter;
      // PDFBox parses every object of an object stream it decodes: a dictionary entry of eight
      // bytes becomes a map entry and a name of about 150.
      this.rate = stream != null && COSName.OBJ_STM.equals(stream.getCOSName(COSName.TYPE)) ? OBJECT_STREAM_RATE : 1;
      this.budget = BUDGET.get();
      this.max = budget == null ? FREE_STREAM_BYTES : maxStreamBytes(budget.sourceBytes());
    }

    @Override
    public void write(int b) throws IOException {
      count(1);
      out.write(b);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      count(len);
      out.write(b, off, len);
    }

    private void count(int n) {
      written += n;
      if (written > max) {
        String detail = "a stream of it (" + filter.getName() + ") decodes to more than " + (max >> 20)
            + " MiB; the limit for one stream of a PDF of " + (budget == null ? "this size" : budget.sourceBytes()
            + " bytes") + " is " + (max >> 20) + " MiB (" + (FREE_STREAM_BYTES >> 20) + " MiB, or "
            + STREAM_BYTES_PER_SOURCE_BYTE + " bytes a byte of source when that is more)";
        IngestException refusal = new IngestException(Reason.TOO_LARGE,
            budget == null ? "pdf" : budget.fileName(), detail);
        throw budget == null ? new IngestBudget.Exceeded(refusal) : budget.trip(refusal);
      }
      if (budget != null && written - charged >= CHARGE_STEP) {
        budget.memory(rate * (written - charged), "the PDF's decoded streams");
        charged = written;
      }
    }
  }
}
