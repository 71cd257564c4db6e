package dev.quarry.ingest;

import dev.quarry.search.Embedder;
import dev.quarry.store.Database;
import dev.quarry.store.DocItem;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings every chunk, of every tenant, to the configured embedding model and to the current
 * context ({@link Chunk#CONTEXT_VERSION}). Vector search only sees chunks recorded under the
 * embedder's model, so after a model change the others drop out of it until they are embedded
 * again; a chunk whose context was made by an older version is still found, by what it had, until
 * its context is recomputed from its document (title, file name, {@link FilingIdentity} of its
 * first pages) and it is embedded with it. This runs in the background while the gateway serves.
 *
 * <p>Chunks go in batches: read, embed on a worker, then one UPDATE per batch (its own
 * transaction), so the work done survives a restart and the next run picks up what is left. The
 * content is never written, so the BM25 index is left alone (see V3__reembed_keeps_terms.sql),
 * except for a chunk whose context changes: BM25 indexes that too (V12).
 *
 * <p>Replicas share the work rather than each doing all of it: a batch's rows are locked from their
 * read to their write ({@code FOR UPDATE SKIP LOCKED}), and another replica's walk passes over
 * locked rows, so each chunk is embedded once however many replicas start together (a batch whose
 * replica dies before its write is left for the next run). A chunk whose content changed in the
 * meantime is skipped by the UPDATE's guard. Not safe against replicas that still ingest with the
 * old model (a rolling deploy): their chunks wait for the next start.
 */
public final class Reembedder {
  private static final Logger LOG = LoggerFactory.getLogger(Reembedder.class);

  /** Passages per batch: amortises the embedder call; bounds the work lost to a stop or crash. */
  public static final int DEFAULT_BATCH = 32;
  /** Tries of one batch, so that a rate limit or a dropped connection does not end the run. */
  static final int ATTEMPTS = 4;
  private static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);

  /** Below every random (version 4) UUID: where the walk over the primary key starts. */
  private static final UUID START = new UUID(0, 0);

  // The model is a property of the deployment, not of a tenant, so the run covers every tenant; but
  // row-level security shows one tenant per transaction, so it walks them one after the other.
  private static final String LIST_TENANTS = "SELECT id FROM tenants ORDER BY id";

  /** Stale chunks by why: the model they are under, or {@code context v0} for an old context. */
  private static final String COUNT_STALE = "SELECT CASE WHEN embedding_model <> $1 THEN embedding_model"
      + " ELSE 'context v' || context_version END AS reason, count(*) AS n FROM chunks"
      + " WHERE embedding_model <> $1 OR context_version < $2 GROUP BY 1";

  /** Walks the primary key, so each batch costs its own rows, not a scan of the table. */
  private static final String NEXT_BATCH = "SELECT id, document_id, context, context_version, embedding_model,"
      + " content, md5(content) AS content_md5 FROM chunks"
      + " WHERE id > $2 AND (embedding_model <> $1 OR context_version < $4) ORDER BY id LIMIT $3"
      // Rows another replica is re-embedding right now are skipped, not waited for: replicas share the work.
      + " FOR UPDATE SKIP LOCKED";

  /** What a document's context is made of: its name and the items of its first pages. */
  private static final String DOCUMENT_NAME = "SELECT title, uri FROM documents WHERE id = $1";
  private static final String FIRST_ITEMS = "SELECT position, self_ref, label, text, page_numbers,"
      + " heading_level, tree_depth FROM items WHERE document_id = $1"
      + " AND (page_numbers[1] <= $2 OR (cardinality(page_numbers) = 0 AND position < $3)) ORDER BY position";

  /**
   * The guard skips chunks brought up to date meanwhile by another replica and chunks whose content
   * is no longer what was embedded. The vectors travel as pgvector's text form; a null one keeps
   * the stored vector (the chunk only needed its context version raised, its text being the same).
   */
  private static final String WRITE_BATCH = "UPDATE chunks c"
      + " SET embedding = coalesce(u.embedding::vector, c.embedding), embedding_model = $1,"
      + " context = u.context, context_version = $6"
      + " FROM unnest($2::uuid[], $3::text[], $4::text[], $5::text[]) AS u(id, content_md5, embedding, context)"
      + " WHERE c.id = u.id AND (c.embedding_model <> $1 OR c.context_version < $6)"
      + " AND md5(c.content) = u.content_md5";

  /** Where a run is. {@code total} is counted when it starts; {@code done} is what it rewrote. */
  public record Status(State state, String model, long done, long total, String error) {
    public enum State {
      /** Not started yet. */
      PENDING,
      RUNNING,
      /** Every chunk it found carries the model (or nothing needed it). */
      DONE,
      /** Stopped on request (shutdown) before the end; the next run resumes. */
      STOPPED,
      /** A batch kept failing; {@code error} says why. The next run resumes. */
      FAILED
    }
  }

  private final Vertx vertx;
  private final Pool pool;
  private final Embedder embedder;
  private final int batchSize;
  private final Duration firstBackoff;
  private final AtomicBoolean started = new AtomicBoolean();
  private final Promise<Status> finished = Promise.promise();
  private volatile boolean stopRequested;
  private volatile Status status;
  /** The timer of a pending retry, or -1: stop() cancels it rather than wait out the backoff. */
  private volatile long retryTimer = -1;
  private int loggedDecile;
  /** The current context of each document met in the tenant being walked. */
  private final Map<UUID, String> contexts = new HashMap<>();

  public Reembedder(Vertx vertx, Pool pool, Embedder embedder) {
    this(vertx, pool, embedder, DEFAULT_BATCH, FIRST_BACKOFF);
  }

  /** {@code firstBackoff} doubles on each retry of a failing batch. */
  Reembedder(Vertx vertx, Pool pool, Embedder embedder, int batchSize, Duration firstBackoff) {
    if (batchSize < 1) {
      throw new IllegalArgumentException("re-embed batch size must be at least 1, got " + batchSize);
    }
    this.vertx = vertx;
    this.pool = pool;
    this.embedder = embedder;
    this.batchSize = batchSize;
    this.firstBackoff = firstBackoff;
    this.status = new Status(Status.State.PENDING, embedder.modelName(), 0, 0, null);
  }

  public Status status() {
    return status;
  }

  /**
   * Starts the run; the future completes with its final status (DONE, STOPPED or FAILED) and never
   * fails, since a failed run is reported, not thrown: search still works on what was re-embedded.
   */
  public Future<Status> run() {
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException("a Reembedder runs once; create another to run again");
    }
    pool.query(LIST_TENANTS).execute()
        .compose(rows -> {
          List<UUID> tenants = new ArrayList<>(rows.size());
          rows.forEach(r -> tenants.add(r.getUUID("id")));
          Map<String, Long> byModel = new TreeMap<>();
          Future<Void> counted = Future.succeededFuture();
          for (UUID tenant : tenants) {
            counted = counted.compose(v -> Database.inTenant(pool, tenant,
                    conn -> conn.preparedQuery(COUNT_STALE).execute(Tuple.of(embedder.modelName(), (short) Chunk.CONTEXT_VERSION)))
                .map(stale -> {
                  stale.forEach(r -> byModel.merge(r.getString("reason"), r.getLong("n"), Long::sum));
                  return null;
                }));
          }
          return counted.map(v -> {
            long total = byModel.values().stream().mapToLong(Long::longValue).sum();
            status = new Status(Status.State.RUNNING, embedder.modelName(), 0, total, null);
            if (total > 0) {
              LOG.info("re-embedding {} chunks of {} tenants with {}, context v{}, in batches of {} (stale: {})",
                  total, tenants.size(), embedder.modelName(), Chunk.CONTEXT_VERSION, batchSize, byModel);
            }
            return tenants;
          });
        })
        .onSuccess(tenants -> nextBatch(tenants, 0, START, 1))
        .onFailure(this::fail);
    return finished.future();
  }

  /**
   * Asks the run to end after the batch in flight (which is still written) and gives its final
   * status. Before {@link #run()}, nothing will run.
   */
  public Future<Status> stop() {
    stopRequested = true;
    long timer = retryTimer;
    if (started.compareAndSet(false, true) || (timer >= 0 && vertx.cancelTimer(timer))) {
      end(Status.State.STOPPED, null);
    }
    return finished.future();
  }

  /** One step of the loop; each step is started by a callback, so the stack never grows. */
  private void nextBatch(List<UUID> tenants, int tenantIndex, UUID after, int attempt) {
    if (stopRequested) {
      end(Status.State.STOPPED, null);
      return;
    }
    if (tenantIndex >= tenants.size()) {
      end(Status.State.DONE, null);
      return;
    }
    UUID tenant = tenants.get(tenantIndex);
    if (START.equals(after)) {
      contexts.clear();
    }
    // One transaction per batch: its rows stay locked from their read to their write, so another
    // replica's walk skips them rather than embedding them a second time.
    Database.inTenant(pool, tenant, conn -> conn.preparedQuery(NEXT_BATCH)
            .execute(Tuple.of(embedder.modelName(), after, batchSize, (short) Chunk.CONTEXT_VERSION))
            .compose(rows -> {
              List<Row> batch = new ArrayList<>(rows.size());
              rows.forEach(batch::add);
              if (batch.isEmpty()) {
                return Future.succeededFuture((UUID) null);
              }
              return contexts(tenant, batch)
                  .compose(newContexts -> embed(batch, newContexts)
                      .compose(vectors -> write(conn, batch, newContexts, vectors)))
                  .map(written -> {
                    progress(written);
                    return batch.getLast().getUUID("id");
                  });
            }))
        .onSuccess(last -> {
          if (last == null) {
            nextBatch(tenants, tenantIndex + 1, START, 1);
          } else {
            nextBatch(tenants, tenantIndex, last, 1);
          }
        })
        .onFailure(err -> {
          if (attempt >= ATTEMPTS || stopRequested) {
            fail(err);
            return;
          }
          long delay = firstBackoff.toMillis() << (attempt - 1);
          LOG.warn("re-embedding batch after {} failed (attempt {} of {}), retrying in {} ms: {}",
              after, attempt, ATTEMPTS, delay, err.toString());
          long timer = vertx.setTimer(Math.max(1, delay), id -> {
            retryTimer = -1;
            nextBatch(tenants, tenantIndex, after, attempt + 1);
          });
          retryTimer = timer;
          // A stop() that came in before retryTimer was set could not cancel it.
          if (stopRequested && vertx.cancelTimer(timer)) {
            end(Status.State.STOPPED, null);
          }
        });
  }

  /** Each chunk's context as it is to be: recomputed from its document where its version is old. */
  private Future<List<String>> contexts(UUID tenant, List<Row> batch) {
    Future<Void> loaded = Future.succeededFuture();
    for (Row row : batch) {
      UUID doc = row.getUUID("document_id");
      if (row.getInteger("context_version") < Chunk.CONTEXT_VERSION) {
        loaded = loaded.compose(v -> contexts.containsKey(doc) ? Future.succeededFuture()
            : documentContext(tenant, doc).map(context -> {
              contexts.put(doc, context);
              return null;
            }));
      }
    }
    return loaded.map(v -> {
      List<String> out = new ArrayList<>(batch.size());
      for (Row row : batch) {
        out.add(row.getInteger("context_version") < Chunk.CONTEXT_VERSION
            ? contexts.get(row.getUUID("document_id")) : row.getString("context"));
      }
      return out;
    });
  }

  /** As ingest makes it: from the document's title, file name and first pages. */
  private Future<String> documentContext(UUID tenant, UUID doc) {
    return Database.inTenant(pool, tenant, conn -> conn.preparedQuery(DOCUMENT_NAME).execute(Tuple.of(doc))
        .compose(name -> conn.preparedQuery(FIRST_ITEMS)
            .execute(Tuple.of(doc, FilingIdentity.PAGES, FilingIdentity.LINES_WITHOUT_PAGES))
            .map(rows -> {
              List<DocItem> items = new ArrayList<>(rows.size());
              for (Row r : rows) {
                List<Integer> pages = new ArrayList<>();
                for (Integer p : r.getArrayOfIntegers("page_numbers")) {
                  pages.add(p);
                }
                items.add(new DocItem(r.getInteger("position"), r.getString("self_ref"), r.getString("label"),
                    r.getString("text"), pages, r.getInteger("heading_level"), r.getInteger("tree_depth")));
              }
              Row n = name.iterator().hasNext() ? name.iterator().next() : null;
              return Chunk.context(n == null ? null : n.getString("title"), n == null ? null : n.getString("uri"),
                  FilingIdentity.find(items).orElse(null));
            })));
  }

  private static boolean embeddedBefore(Row row, int version) {
    return row.getInteger("context_version") < version;
  }

  private static String content(Row row) {
    return row.getString("content");
  }

  /**
   * The vectors of the chunks that need one (another model, a context that changed, or a table
   * embedded with its figures before {@link Chunk#TABLES_WITHOUT_FIGURES}), null for the others,
   * in the batch's order.
   */
  private Future<List<String>> embed(List<Row> batch, List<String> newContexts) {
    List<String> texts = new ArrayList<>(batch.size());
    List<Integer> which = new ArrayList<>(batch.size());
    for (int i = 0; i < batch.size(); i++) {
      Row row = batch.get(i);
      if (!embedder.modelName().equals(row.getString("embedding_model"))
          || !newContexts.get(i).equals(row.getString("context"))
          || embeddedBefore(row, Chunk.TABLES_WITHOUT_FIGURES) && !Chunk.embeddedText(newContexts.get(i), content(row))
              .equals(Chunk.embeddedTextWithFigures(newContexts.get(i), content(row)))) {
        texts.add(Chunk.embeddedText(newContexts.get(i), row.getString("content")));
        which.add(i);
      }
    }
    if (texts.isEmpty()) {
      return Future.succeededFuture(Arrays.asList(new String[batch.size()]));
    }
    // The embedder blocks (ONNX or HTTP); unordered so that searches are not queued behind it.
    return vertx.executeBlocking(() -> {
      List<float[]> vectors = embedder.embedPassages(texts);
      if (vectors.size() != texts.size()) {
        throw new IllegalStateException(embedder.modelName() + " returned " + vectors.size()
            + " vectors for " + texts.size() + " passages");
      }
      List<String> literals = Arrays.asList(new String[batch.size()]);
      for (int k = 0; k < vectors.size(); k++) {
        float[] v = vectors.get(k);
        if (v.length != embedder.dimensions()) {
          throw new IllegalStateException(embedder.modelName() + " returned a vector of "
              + v.length + " dimensions; it declares " + embedder.dimensions());
        }
        literals.set(which.get(k), IngestService.vectorLiteral(v));
      }
      return literals;
    }, false);
  }

  private Future<Integer> write(io.vertx.sqlclient.SqlConnection conn, List<Row> batch, List<String> newContexts,
      List<String> vectors) {
    UUID[] ids = new UUID[batch.size()];
    String[] contentMd5 = new String[batch.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = batch.get(i).getUUID("id");
      contentMd5[i] = batch.get(i).getString("content_md5");
    }
    Tuple args = Tuple.tuple()
        .addString(embedder.modelName())
        .addArrayOfUUID(ids)
        .addArrayOfString(contentMd5)
        .addArrayOfString(vectors.toArray(String[]::new))
        .addArrayOfString(newContexts.toArray(String[]::new))
        .addShort((short) Chunk.CONTEXT_VERSION);
    return conn.preparedQuery(WRITE_BATCH).execute(args).map(rows -> rows.rowCount());
  }

  private void progress(int written) {
    Status s = status;
    long done = s.done() + written;
    status = new Status(Status.State.RUNNING, s.model(), done, s.total(), null);
    int decile = s.total() == 0 ? 10 : (int) Math.min(10, done * 10 / s.total());
    if (decile > loggedDecile) {
      loggedDecile = decile;
      LOG.info("re-embedding: {}/{} chunks ({}%) with {}", done, s.total(),
          s.total() == 0 ? 100 : done * 100 / s.total(), s.model());
    }
  }

  private void fail(Throwable err) {
    LOG.error("re-embedding with {} stopped after {} of {} chunks; the next start resumes it",
        embedder.modelName(), status.done(), status.total(), err);
    end(Status.State.FAILED, err.toString());
  }

  private void end(Status.State state, String error) {
    Status s = status;
    status = new Status(state, s.model(), s.done(), s.total(), error);
    if (state == Status.State.DONE && s.total() > 0) {
      LOG.info("re-embedding done: {} chunks rewritten with {}", s.done(), s.model());
    } else if (state == Status.State.STOPPED && s.total() > s.done()) {
      LOG.info("re-embedding stopped at {}/{} chunks; the next start resumes it", s.done(), s.total());
    }
    finished.tryComplete(status);
  }
}
