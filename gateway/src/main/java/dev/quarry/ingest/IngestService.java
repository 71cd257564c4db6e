package dev.quarry.ingest;

import dev.quarry.search.TenantLines;

import dev.quarry.store.DocItem;

import dev.quarry.ingest.StageTimes.Stage;
import dev.quarry.config.Config;
import dev.quarry.telemetry.QuarryMetrics;
import dev.quarry.search.Embedder;
import dev.quarry.store.DocumentsFs;
import dev.quarry.store.Database;
import dev.quarry.config.Quota;
import dev.quarry.tenancy.QuotaExceeded;
import dev.quarry.store.Sql;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** convert → section tree → chunks → embeddings → one transaction in PostgreSQL. */
public final class IngestService {
  private static final Logger LOG = LoggerFactory.getLogger(IngestService.class);
  /** Passages per embedder call: big enough to amortise the call, small enough to bound memory. */
  static final int EMBED_BATCH = 32;
  /** Attempts of the write transaction when a concurrent ingest of the same uri gets in first. */
  private static final int WRITE_ATTEMPTS = 3;

  private final Vertx vertx;
  private final Pool pool;
  private final Embedder embedder;
  private final DocumentsFs documentsFs;
  private final Config config;
  private final Converters converters;
  private final StageTimes stages = new StageTimes();
  private final QuarryMetrics metrics;

  /**
   * How many ingests convert and embed at once, gateway-wide; more wait their turn. They run on a
   * pool of their own, not on Vert.x's shared workers, which also embed every search's query,
   * launch sandboxes and answer /readyz's Docker check: the red team's 22 slow ingests at once
   * filled those 20 threads and held another tenant's search for 34 s.
   */
  public static final int INGEST_WORKERS = 4;

  /**
   * How many of one tenant's ingests run at once: half the workers, so that one tenant's line of
   * uploads never keeps another tenant's ingest waiting for a worker (its others wait in its own
   * line, {@link TenantLines}; how many may wait is the {@code concurrent_ingests} quota).
   */
  public static final int TENANT_WORKERS = INGEST_WORKERS / 2;

  private final WorkerExecutor workers;
  private final TenantLines lines = new TenantLines(TENANT_WORKERS);
  /** What all ingests under way may hold together; each reserves its file's share before it converts. */
  private final IngestMemory memory;

  /**
   * Where an ingest registers while it runs: the gateway's drain, which on SIGTERM refuses new ones
   * (by throwing from {@code begin}), lets running ones finish within its grace, then calls
   * {@code cancel}. Returns what ends the registration.
   */
  @FunctionalInterface
  public interface WorkTracker {
    Runnable begin(Runnable cancel);
  }

  private volatile WorkTracker tracker = cancel -> () -> {};

  public IngestService(Vertx vertx, Pool pool, Embedder embedder, DocumentsFs documentsFs, Config config) {
    this(vertx, pool, embedder, documentsFs, config, new QuarryMetrics());
  }

  public IngestService(Vertx vertx, Pool pool, Embedder embedder, DocumentsFs documentsFs, Config config,
      QuarryMetrics metrics) {
    this.metrics = metrics;
    this.vertx = vertx;
    this.pool = pool;
    this.embedder = embedder;
    this.documentsFs = documentsFs;
    this.config = config;
    this.converters = new Converters(config.maxUploadBytes());
    this.workers = vertx.createSharedWorkerExecutor("quarry-ingest", INGEST_WORKERS);
    this.memory = new IngestMemory(config.ingest().memoryBytes());
  }

  /**
   * Converts each format's sample on an ingest worker, so that the converters' libraries are
   * initialised before the gateway serves (see {@link ConverterHealth}); the gateway's start waits
   * for it.
   */
  public Future<Void> checkConverters() {
    return workers.executeBlocking(() -> {
      converters.health().checkAll(converters);
      return null;
    }, false);
  }

  /** Null when every format converts on this gateway, else which do not and why ({@code /readyz}). */
  public String converterProblem() {
    return converters.health().problem();
  }

  /** What all ingests under way may hold together, and what they hold now. */
  public IngestMemory memory() {
    return memory;
  }

  /**
   * Ingests from now on register with this tracker (the gateway's drain): a rolling restart lets
   * them finish within its grace instead of interrupting them (the client's connection was cut, and
   * the gateway logged an unexpected failure), and one still running after the grace stops before
   * its next batch of chunks with {@link IngestException.Reason#SHUTTING_DOWN}, nothing stored.
   */
  public IngestService trackWith(WorkTracker tracker) {
    this.tracker = tracker;
    return this;
  }

  /** Where ingests spent their time so far, per stage (for benchmarks and diagnosis). */
  public StageTimes stageTimes() {
    return stages;
  }

  /** Fails with {@link IngestException} for bad input; nothing is stored then. */
  public Future<IngestResult> ingest(UUID tenantId, IngestRequest request) {
    return ingest(tenantId, request, Long.MAX_VALUE);
  }

  /**
   * As {@link #ingest(UUID, IngestRequest)}, and fails with {@link QuotaExceeded} when the tenant's
   * documents would then take more than {@code storedBytesLimit} bytes of source, titles and uris
   * (a replaced version no longer counts). Checked in the write transaction, under a per-tenant lock, so concurrent
   * ingests cannot overshoot it together.
   */
  public Future<IngestResult> ingest(UUID tenantId, IngestRequest request, long storedBytesLimit) {
    return ingest(tenantId, request, storedBytesLimit, IngestProgress.NONE);
  }

  /**
   * As {@link #ingest(UUID, IngestRequest, long)}, reporting to {@code progress} once the document is
   * converted and after each batch of chunks the model embeds. A document whose uri already holds
   * these bytes reports nothing. It starts when the tenant has fewer than {@link #TENANT_WORKERS} ingests
   * running, and waits its turn otherwise.
   */
  public Future<IngestResult> ingest(UUID tenantId, IngestRequest request, long storedBytesLimit,
      IngestProgress progress) {
    AtomicBoolean cancelled = new AtomicBoolean();
    Runnable end;
    try {
      end = tracker.begin(() -> cancelled.set(true));
    } catch (RuntimeException draining) {
      return Future.failedFuture(draining);
    }
    return lines.run(tenantId, () -> measured(tenantId, request, storedBytesLimit, progress, cancelled::get))
        .andThen(done -> end.run());
  }

  private Future<IngestResult> measured(UUID tenantId, IngestRequest request, long storedBytesLimit,
      IngestProgress progress, BooleanSupplier cancelled) {
    long started = System.nanoTime();
    return ingestUnmeasured(tenantId, request, storedBytesLimit, progress, cancelled).andThen(done -> {
      long nanos = System.nanoTime() - started;
      if (done.succeeded()) {
        IngestResult r = done.result();
        // An unchanged document wrote no chunks: its existing ones are not counted again.
        int chunks = r.status() == IngestResult.Status.UNCHANGED ? 0 : r.chunkCount();
        metrics.ingested(r.status().name(), r.sourceType(), chunks, request.bytes().length, nanos);
      } else {
        metrics.ingestFailed(done.cause() instanceof IngestException e ? e.reason().name() : "internal", nanos);
      }
    });
  }

  private Future<IngestResult> ingestUnmeasured(UUID tenantId, IngestRequest request, long storedBytesLimit,
      IngestProgress progress, BooleanSupplier cancelled) {
    String fileName = fileName(request);
    String uri = request.uri() == null || request.uri().isBlank() ? fileName : request.uri().strip();
    byte[] bytes = request.bytes();
    try {
      checkLength(fileName, "uri", uri, MAX_URI_CHARS);
      checkLength(fileName, "title", request.title(), MAX_TITLE_CHARS);
    } catch (IngestException e) {
      return Future.failedFuture(e);
    }
    return workers.executeBlocking(() -> {
          SourceType type = converters.detect(fileName, request.contentType(), bytes);
          return new Sniffed(type, sha256(bytes));
        }, false)
        // The uri decides which document this is; its bytes only whether it changes. The same bytes
        // under another uri are another document (red team R6-4: they were "unchanged" with that
        // one, and this uri kept its old text). Looked at again under a lock when it is written.
        .compose(sniffed -> Database.inTenant(pool, tenantId,
                conn -> conn.preparedQuery(Sql.FIND_BY_URI).execute(Tuple.of(tenantId, uri)))
            .compose(rows -> sameBytes(rows, sniffed.hash()) != null
                ? Future.succeededFuture(unchanged(sameBytes(rows, sniffed.hash())))
                // The file's share of the ingests' memory is held from its conversion to its write.
                : memory.reserve(IngestBudget.memoryFor(bytes.length, config.ingest()))
                    .compose(reservation -> prepare(tenantId, fileName, uri, request, sniffed, storedBytesLimit,
                            progress, cancelled)
                        .compose(prepared -> write(prepared, 1)
                            .compose(written -> syncQuietly(prepared, written)))
                        .andThen(done -> reservation.close()))));
  }

  private record Sniffed(SourceType type, String hash) {}

  /** The uri's document when it already holds these bytes, else null. */
  private static Row sameBytes(RowSet<Row> byUri, String hash) {
    if (byUri.size() == 0) {
      return null;
    }
    Row row = byUri.iterator().next();
    return hash.equals(row.getString("content_hash")) ? row : null;
  }

  /** Everything the transaction writes, computed before it opens so it stays short. */
  private record Prepared(
      UUID tenantId, String uri, String title, String context, SourceType type, String hash, long byteSize,
      List<DocItem> items, Toc toc, String content, List<Chunk> chunks, List<String> vectors,
      long storedBytesLimit, int undecodableChars, Map<Integer, Integer> undecodablePages, Rows rows) {}

  private Future<Prepared> prepare(
      UUID tenantId, String fileName, String uri, IngestRequest request, Sniffed sniffed,
      long storedBytesLimit, IngestProgress progress, BooleanSupplier cancelled) {
    return workers.executeBlocking(() -> {
      try {
        return prepareHere(tenantId, fileName, uri, request, sniffed, storedBytesLimit, progress, cancelled);
      } catch (IngestBudget.Exceeded e) {
        throw e.refusal();
      } catch (OutOfMemoryError e) {
        // Past the conversion (which has its own guard): chunks, vectors, rows of a document at its bounds.
        throw new IngestException(IngestException.Reason.TOO_LARGE, fileName,
            "needs more memory to store than the gateway has for one document", e);
      } catch (StackOverflowError e) {
        throw new IngestException(IngestException.Reason.MALFORMED, fileName,
            "is nested too deeply to be stored", e);
      }
    }, false);
  }

  /** The blocking part of {@link #prepare}, on an ingest worker: the budget belongs to this thread. */
  private Prepared prepareHere(UUID tenantId, String fileName, String uri, IngestRequest request,
      Sniffed sniffed, long storedBytesLimit, IngestProgress progress, BooleanSupplier cancelled)
      throws IngestException {
    stopIfCancelled(cancelled, fileName);
    long t0 = System.nanoTime();
    IngestBudget budget = IngestBudget.of(fileName, request.bytes().length, config.ingest());
    TextHygiene.Result converted = converters.convertClean(sniffed.type(), fileName, request.bytes(), budget);
    ConvertedDocument doc = converted.document();
    List<DocItem> items = doc.items();
    if (converted.undecodableChars() > 0) {
      LOG.info("{}: dropped {} undecodable characters ({} items left with none)", fileName,
          converted.undecodableChars(), converted.droppedItems());
    }
    long tConverted = System.nanoTime();
    Toc toc = TocBuilder.build(items);
    long tToc = System.nanoTime();
    // What the conversion built on the way is garbage now; its items stay. Then content.txt, the
    // chunks and the rows are about as large again as the items, twice over.
    long chars = items.stream().mapToLong(it -> it.text().length()).sum();
    budget.held(IngestBudget.ITEM_BYTES * items.size() + 2 * chars);
    budget.memory(4 * chars, "the chunks and rows to store");
    List<Chunk> chunks = Chunker.chunk(items, toc);
    // Each chunk's vector is kept as text until the write: about 4,500 characters of 384 numbers.
    budget.memory(VECTOR_BYTES * chunks.size(), "the chunks' vectors");
    long t1 = System.nanoTime();
    progress.converted(sniffed.type().wireName(), items.size(), chunks.size());
    String title = Chunk.cut(firstNonBlank(request.title(), doc.title(), fileName), MAX_TITLE_CHARS);
    String context = Chunk.context(title, uri, FilingIdentity.find(items).orElse(null));
    List<String> vectors = embed(chunks, context, progress, cancelled, fileName);
    long t2 = System.nanoTime();
    stages.add(Stage.CONVERT, tConverted - t0);
    stages.add(Stage.TOC, tToc - tConverted);
    stages.add(Stage.CHUNK, t1 - tToc);
    stages.add(Stage.EMBED, t2 - t1);
    LOG.info("{}: {} items, {} chunks; convert+chunk {} ms, embed {} ms", fileName, items.size(),
        chunks.size(), (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000);
    return new Prepared(tenantId, uri, title, context, sniffed.type(), sniffed.hash(),
        request.bytes().length, items, toc, content(items), chunks, vectors, storedBytesLimit,
        converted.undecodableChars(), converted.undecodableByPage(),
        encodeRows(items, toc, chunks, context, vectors));
  }

  /** What one chunk's vector costs as pgvector's text until the write, with its share of the rows. */
  static final int VECTOR_BYTES = 8 * 1024;

  private List<String> embed(List<Chunk> chunks, String context, IngestProgress progress,
      BooleanSupplier cancelled, String fileName) throws IngestException {
    List<String> vectors = new ArrayList<>(chunks.size());
    for (int i = 0; i < chunks.size(); i += EMBED_BATCH) {
      stopIfCancelled(cancelled, fileName);
      List<String> texts = new ArrayList<>();
      for (Chunk c : chunks.subList(i, Math.min(chunks.size(), i + EMBED_BATCH))) {
        texts.add(Chunk.embeddedText(context, c.content()));
      }
      List<float[]> out = embedder.embedPassages(texts);
      if (out.size() != texts.size()) {
        throw new IllegalStateException(embedder.modelName() + " returned " + out.size()
            + " vectors for " + texts.size() + " passages");
      }
      for (float[] v : out) {
        vectors.add(vectorLiteral(v));
      }
      progress.embedded(vectors.size(), chunks.size());
    }
    return vectors;
  }

  /**
   * Stops an ingest the gateway's drain cancelled (before its conversion, before each batch of
   * chunks it embeds): nothing of it is written.
   */
  private static void stopIfCancelled(BooleanSupplier cancelled, String fileName) throws IngestException {
    if (cancelled.getAsBoolean()) {
      throw new IngestException(IngestException.Reason.SHUTTING_DOWN, fileName,
          "the gateway shut down before this document was stored; nothing of it was stored; send it again");
    }
  }

  /** pgvector's text form; NaN and infinities are left in so PostgreSQL rejects them loudly. */
  static String vectorLiteral(float[] v) {
    StringBuilder sb = new StringBuilder(v.length * 12).append('[');
    for (int i = 0; i < v.length; i++) {
      if (i > 0) {
        sb.append(',');
      }
      sb.append(v[i]);
    }
    return sb.append(']').toString();
  }

  /** A concurrent ingest inserted the same uri first; the transaction is rolled back. */
  private static final class LostRace extends RuntimeException {
    LostRace() {
      super("a concurrent ingest of the same source committed first", null, false, false);
    }
  }

  /** What the transaction did and, when it created or replaced the document, the row it wrote. */
  private record Written(IngestResult result, Row document) {}

  private Future<Written> write(Prepared p, int attempt) {
    long t0 = System.nanoTime();
    return Database.inTenant(pool, p.tenantId(), conn -> writeIn(conn, p))
        .onSuccess(w -> stages.add(Stage.TRANSACTION, System.nanoTime() - t0))
        .recover(err -> {
          boolean race = err instanceof LostRace
              || (err instanceof PgException pg && "23505".equals(pg.getSqlState()));
          if (race && attempt < WRITE_ATTEMPTS) {
            return write(p, attempt + 1);
          }
          return Future.failedFuture(err);
        });
  }

  /**
   * Creates the uri's document, replaces it, or leaves it when it already holds these bytes (a
   * concurrent ingest of the same uri and bytes got in first). The uri's row is locked before it is
   * compared, so two ingests of one uri write one after the other; two that both find no row race
   * on the insert, and the loser ({@link LostRace}) looks again. The stored-bytes lock is taken
   * before the row's, in every ingest, as before.
   */
  private Future<Written> writeIn(SqlConnection conn, Prepared p) {
    Tuple key = Tuple.of(p.tenantId(), p.uri());
    return conn.preparedQuery(Sql.FIND_BY_URI).execute(key)
        .compose(byUri -> {
          Row same = sameBytes(byUri, p.hash());
          if (same != null) {
            return Future.succeededFuture(new Written(unchanged(same), null));
          }
          return checkStoredBytes(conn, p)
              .compose(v -> conn.preparedQuery(Sql.FIND_BY_URI_FOR_UPDATE).execute(key))
              .compose(locked -> {
                Row now = sameBytes(locked, p.hash());
                if (now != null) {
                  return Future.succeededFuture(new Written(unchanged(now), null));
                }
                return locked.size() > 0
                    ? replace(conn, p, locked.iterator().next().getUUID("id"))
                    : insert(conn, p, UUID.randomUUID());
              });
        });
  }

  private Future<Void> checkStoredBytes(SqlConnection conn, Prepared p) {
    if (p.storedBytesLimit() == Long.MAX_VALUE) {
      return Future.succeededFuture();
    }
    return conn.preparedQuery(Sql.LOCK_TENANT_STORAGE).execute(Tuple.of(p.tenantId()))
        .compose(locked -> conn.preparedQuery(Sql.STORED_BYTES_EXCEPT_URI).execute(Tuple.of(p.tenantId(), p.uri())))
        .compose(rows -> {
          long stored = rows.iterator().next().getLong("bytes");
          long limit = p.storedBytesLimit();
          long size = storedSize(p);
          if (stored + size > limit) {
            return Future.failedFuture(new QuotaExceeded(Quota.STORED_BYTES, limit, 3600,
                "the tenant stores " + stored + " bytes of documents; this one (" + size
                    + " bytes with its title and uri) would take it over; delete documents or ask for a"
                    + " larger quota"));
          }
          return Future.succeededFuture();
        });
  }

  /**
   * What a document counts against {@code stored_bytes}: its source bytes, title and uri (UTF-8), as
   * {@link Sql#STORED_BYTES_EXCEPT_URI} sums them. A client may send a 1,000-character title and a
   * 2,048-character uri with a few bytes of content; they are stored, so they count.
   */
  private static long storedSize(Prepared p) {
    return p.byteSize() + p.title().getBytes(StandardCharsets.UTF_8).length
        + p.uri().getBytes(StandardCharsets.UTF_8).length;
  }

  private Future<Written> insert(SqlConnection conn, Prepared p, UUID id) {
    Tuple doc = Tuple.of(id, p.tenantId(), p.title(), p.uri(), p.type().wireName(), p.hash())
        .addLong(p.byteSize())
        .addString(p.content())
        .addValue(p.toc().toJson(id, p.title()))
        .addInteger(p.items().size())
        .addInteger(p.chunks().size());
    return conn.preparedQuery(Sql.INSERT_DOCUMENT).execute(doc)
        .compose(rows -> rows.size() == 0 ? Future.<Row>failedFuture(new LostRace())
            : insertItemsAndChunks(conn, p, id).map(v -> rows.iterator().next()))
        .map(row -> new Written(result(id, IngestResult.Status.CREATED, p), row));
  }

  private Future<Written> replace(SqlConnection conn, Prepared p, UUID id) {
    Tuple doc = Tuple.of(p.tenantId(), id, p.title(), p.type().wireName(), p.hash())
        .addLong(p.byteSize())
        .addString(p.content())
        .addValue(p.toc().toJson(id, p.title()))
        .addInteger(p.items().size())
        .addInteger(p.chunks().size());
    Tuple key = Tuple.of(p.tenantId(), id);
    return conn.preparedQuery(Sql.REPLACE_DOCUMENT).execute(doc)
        .compose(replaced -> conn.preparedQuery(Sql.DELETE_CHUNKS).execute(key)
            .compose(v -> conn.preparedQuery(Sql.DELETE_ITEMS).execute(key))
            .compose(v -> insertItemsAndChunks(conn, p, id))
            .map(v -> new Written(result(id, IngestResult.Status.REPLACED, p), replaced.iterator().next())));
  }

  /**
   * The items' and chunks' rows as the insert statements take them (JSON arrays), encoded on the
   * ingest worker that prepared them: for a large document that is tens of megabytes of JSON, which
   * must not be built on the event loop (the red team's 200,000-page item ran it out of memory there).
   */
  private record Rows(String items, String chunks) {}

  private Rows encodeRows(List<DocItem> docItems, Toc toc, List<Chunk> docChunks, String context,
      List<String> vectors) {
    long t0 = System.nanoTime();
    JsonArray items = new JsonArray(new ArrayList<>(docItems.size()));
    for (DocItem it : docItems) {
      int pos = it.position();
      items.add(it.toJson()
          .put("section_start", toc.sectionStart()[pos])
          .put("section_end", toc.sectionEnd()[pos]));
    }
    JsonArray chunks = new JsonArray(new ArrayList<>(docChunks.size()));
    for (Chunk c : docChunks) {
      chunks.add(new JsonObject()
          .put("id", UUID.randomUUID().toString())
          .put("ordinal", c.ordinal())
          .put("item_start", c.itemStart())
          .put("item_end", c.itemEnd())
          .put("headings", new JsonArray(List.copyOf(c.headings())))
          .put("content", c.content())
          .put("context", context)
          .put("page_numbers", new JsonArray(List.copyOf(c.pageNumbers())))
          .put("doc_item_refs", new JsonArray(List.copyOf(c.docItemRefs())))
          .put("labels", new JsonArray(List.copyOf(c.labels())))
          .put("embedding", vectors.get(c.ordinal())));
    }
    Rows rows = new Rows(items.encode(), chunks.encode());
    stages.add(Stage.ENCODE_ROWS, System.nanoTime() - t0);
    return rows;
  }

  private Future<Void> insertItemsAndChunks(SqlConnection conn, Prepared p, UUID id) {
    String itemRows = p.rows().items();
    String chunkRows = p.rows().chunks();
    long t1 = System.nanoTime();
    Future<Void> itemsDone = p.items().isEmpty() ? Future.succeededFuture()
        : conn.preparedQuery(Sql.INSERT_ITEMS).execute(Tuple.of(p.tenantId(), id, itemRows)).mapEmpty();
    return itemsDone
        .compose(v -> {
          long t2 = System.nanoTime();
          stages.add(Stage.INSERT_ITEMS, t2 - t1);
          Future<Void> chunksDone = p.chunks().isEmpty() ? Future.succeededFuture()
              : conn.preparedQuery(Sql.INSERT_CHUNKS)
                  .execute(Tuple.of(p.tenantId(), id, embedder.modelName(), chunkRows, (short) Chunk.CONTEXT_VERSION))
                  .mapEmpty();
          return chunksDone.onSuccess(x -> stages.add(Stage.INSERT_CHUNKS, System.nanoTime() - t2));
        });
  }

  /**
   * The /documents cache follows the database; it can always be rebuilt, so a failure only logs. The
   * files are written from what the transaction wrote, not read back.
   */
  private Future<IngestResult> syncQuietly(Prepared p, Written written) {
    IngestResult result = written.result();
    UUID tenant = p.tenantId();
    if (documentsFs == null || written.document() == null) {
      return Future.succeededFuture(result);
    }
    long t0 = System.nanoTime();
    return documentsFs.written(tenant, written.document(), p.content(), p.items())
        .onComplete(x -> stages.add(Stage.SYNC, System.nanoTime() - t0))
        .<IngestResult>map(path -> result)
        .otherwise(err -> {
          LOG.warn("ingested {} but syncing /documents of tenant {} failed: {}", result.documentId(),
              tenant, err.toString());
          return result;
        });
  }

  private IngestResult result(UUID id, IngestResult.Status status, Prepared p) {
    return new IngestResult(id, status, p.title(), p.type().wireName(), p.items().size(),
        p.chunks().size(), p.undecodableChars(), p.undecodablePages());
  }

  private static IngestResult unchanged(Row row) {
    return new IngestResult(row.getUUID("id"), IngestResult.Status.UNCHANGED, row.getString("title"),
        row.getString("source_type"), row.getInteger("item_count"), row.getInteger("chunk_count"), 0);
  }

  /** content.txt: the items' text in reading order, without page headers and footers. */
  static String content(List<DocItem> items) {
    StringBuilder sb = new StringBuilder();
    for (DocItem it : items) {
      if (it.label().equals("page_header") || it.label().equals("page_footer") || it.text().isBlank()) {
        continue;
      }
      if (!sb.isEmpty()) {
        sb.append("\n\n");
      }
      sb.append(it.text());
    }
    return sb.toString();
  }

  /** PostgreSQL text cannot hold U+0000; a converter may still pass one through from a source. */
  private static String fileName(IngestRequest request) {
    if (request.fileName() != null && !request.fileName().isBlank()) {
      return request.fileName().strip();
    }
    if (request.uri() != null && !request.uri().isBlank()) {
      String u = request.uri().strip();
      String last = u.substring(u.lastIndexOf('/') + 1);
      return last.isBlank() ? u : last;
    }
    return "upload";
  }

  /**
   * The longest {@code uri} kept, in characters and in UTF-8 bytes: a web address or a path, with
   * room to spare; it is unique per tenant under a B-tree index, whose rows PostgreSQL caps at
   * 2,704 bytes.
   */
  public static final int MAX_URI_CHARS = 2_048;

  /** The longest title kept: one a client sends is refused beyond it, a converter's is cut. */
  public static final int MAX_TITLE_CHARS = 1_000;

  private static void checkLength(String fileName, String field, String value, int max)
      throws IngestException {
    if (value == null) {
      return;
    }
    int bytes = value.getBytes(StandardCharsets.UTF_8).length;
    if (value.length() > max || bytes > max) {
      throw new IngestException(IngestException.Reason.FIELD_TOO_LONG, Chunk.cut(fileName, 100),
          "field '" + field + "' is " + value.length() + " characters (" + bytes
              + " bytes in UTF-8); the limit is " + max);
    }
  }

  private static String firstNonBlank(String... values) {
    for (String v : values) {
      if (v != null && !v.isBlank()) {
        return v.strip();
      }
    }
    return "untitled";
  }

  static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }
}
