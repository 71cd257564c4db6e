package dev.quarry.store;

import dev.quarry.store.DocItem;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.file.AsyncFile;
import io.vertx.core.file.OpenOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * The {@code /documents} filesystem of docs/CONTRACT.md, per tenant, materialised from PostgreSQL under
 * {@code root/{tenant_id}/}. A cache: safe to delete, rebuilt from the database at any time.
 *
 * <p>Readers (sandboxes) never see a half-written document: a document's files are written into a
 * staging directory outside every tenant directory, then the directory is renamed into place. What
 * was last written for each document (its version and content hash) is recorded outside the tenant
 * directory too, under {@code root/.state/}, so sandboxes see exactly the four files of the
 * contract, and a sync rewrites only documents whose version changed.
 *
 * <p>A file is never written in place: each version of a document is a new directory, renamed into
 * place, and the old one is deleted. So a hard link to a file (a scoped sandbox's view, built with
 * {@link #sync(UUID, TreeWork)}) keeps the version it was made from, whole, whatever happens to the
 * document afterwards.
 */
public final class DocumentsFs {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(DocumentsFs.class);
  public static final List<String> FILES = List.of("metadata.json", "content.txt", "items.jsonl", "toc.json");

  private final Vertx vertx;
  private final Pool pool;
  private final Path root;
  /** The last sync of each tenant: syncs of one tenant run one after the other. */
  private final Map<UUID, Future<Path>> lastSync = new HashMap<>();
  /**
   * What this process last wrote or found on disk for each document: its version marker and its
   * directory's modification time then. A full sync takes a document whose marker and directory
   * time are unchanged as up to date with one stat, instead of reading its marker and checking its
   * four files. Anything done to the directory from outside (a file deleted, the directory replaced)
   * changes its time, and the document is checked in full again.
   */
  private final Map<UUID, Map<UUID, Known>> known = new ConcurrentHashMap<>();

  private record Known(String marker, FileTime modified) {}

  /**
   * Tenants deleted through this gateway ({@link #tenantDeleted}): nothing is written for them any
   * more, so a write queued or asked for around the deletion cannot bring back their directories.
   * Tenant ids are random and never reused; one entry per deleted tenant, for the process's life.
   */
  private final Set<UUID> deletedTenants = ConcurrentHashMap.newKeySet();

  public DocumentsFs(Vertx vertx, Pool pool, Path root) {
    this.vertx = vertx;
    this.pool = pool;
    this.root = root;
  }

  /** The directory of every tenant's directory. */
  public Path root() {
    return root;
  }

  /** The tenant's directory (what a sandbox mounts at /documents). */
  public Path tenantDir(UUID tenantId) {
    return root.resolve(tenantId.toString());
  }

  private Path stateDir(UUID tenantId) {
    return root.resolve(".state").resolve(tenantId.toString());
  }

  private Path stagingDir() {
    return root.resolve(".staging");
  }

  /**
   * Brings the tenant's directory up to date with the database, writing only what changed. Fails
   * for a tenant deleted through this gateway: there is nothing to mount.
   */
  public Future<Path> sync(UUID tenantId) {
    return inTurn(tenantId, () -> deletedTenants.contains(tenantId)
        ? Future.failedFuture(new IllegalStateException("tenant " + tenantId + " was deleted"))
        : syncNow(tenantId))
        .recover(e -> Future.failedFuture(described(tenantId, e)));
  }

  /**
   * A filesystem failure of a sync as a sandbox's start reports it to clients: why, never where
   * (the directory is a host path; README, Security). The whole failure goes to the log.
   */
  private static Throwable described(UUID tenantId, Throwable e) {
    if (!(e instanceof IOException) && !(e instanceof UncheckedIOException)) {
      return e;
    }
    LOG.warn("the documents directory of tenant {} could not be brought up to date: {}", tenantId, e.toString());
    return new IOException("the documents directory of tenant " + tenantId + " could not be brought up to date ("
        + dev.quarry.config.HostPaths.reason(e) + ")", e);
  }

  /** Something done on a tenant's directory while nothing of the tenant's is written. */
  @FunctionalInterface
  public interface TreeWork {
    void use(Path tenantDir) throws Exception;
  }

  /**
   * As {@link #sync(UUID)}, then runs {@code work} on the tenant's directory (blocking, on a worker)
   * before any later write or deletion of the tenant's documents: whatever it reads of a document is
   * one version of it, whole (a scoped sandbox's view links the files of its documents this way).
   */
  public Future<Path> sync(UUID tenantId, TreeWork work) {
    return inTurn(tenantId, () -> deletedTenants.contains(tenantId)
        ? Future.failedFuture(new IllegalStateException("tenant " + tenantId + " was deleted"))
        : syncNow(tenantId).compose(dir -> vertx.executeBlocking(() -> {
          work.use(dir);
          return dir;
        }, false)));
  }

  /**
   * Removes a deleted tenant's files, its directory and its version markers under {@code .state},
   * after the tenant's syncs and writes asked for before it (one running now finishes first); from
   * now on {@link #written} and {@link #deleted} do nothing for it and {@link #sync} fails, so no
   * write, queued before or asked for after, recreates them (red team R6-5). Call it once the
   * tenant's rows are gone.
   */
  public Future<Void> tenantDeleted(UUID tenantId) {
    Future<Path> removed;
    synchronized (lastSync) {
      // Marked and queued at once: any write asked for from now on does nothing, every one before
      // runs first.
      deletedTenants.add(tenantId);
      removed = lastSync.getOrDefault(tenantId, Future.succeededFuture())
          .transform(ignored -> vertx.executeBlocking(() -> {
            known.remove(tenantId);
            deleteRecursively(tenantDir(tenantId));
            deleteRecursively(stateDir(tenantId));
            return tenantDir(tenantId);
          }, false));
      lastSync.put(tenantId, removed);
    }
    return removed.andThen(done -> {
      synchronized (lastSync) {
        lastSync.remove(tenantId, removed);
      }
    }).mapEmpty();
  }

  /**
   * Runs {@code work} after the tenant's syncs, writes and deletions asked for before it. For a
   * deleted tenant nothing is queued (its entry is gone): {@code work} sees it deleted at once.
   */
  private Future<Path> inTurn(UUID tenantId, Supplier<Future<Path>> work) {
    synchronized (lastSync) {
      if (!deletedTenants.contains(tenantId)) {
        Future<Path> previous = lastSync.getOrDefault(tenantId, Future.succeededFuture());
        Future<Path> next = previous.transform(ignored -> work.get());
        lastSync.put(tenantId, next);
        return next;
      }
    }
    return work.get();
  }

  /** The columns an ingest's INSERT or UPDATE of a document returns, for {@link #written}. */
  public static final String WRITTEN_COLUMNS = "id, title, uri, created_at, version, content_hash, toc";

  /**
   * Writes the files of a document an ingest has just committed, from what the ingest wrote: the
   * document row its INSERT or UPDATE returned ({@link #WRITTEN_COLUMNS}), the content and the items.
   * Nothing is read back from the database, and no other document is looked at. Ordered with the
   * tenant's other syncs. The files are byte for byte those {@link #sync(UUID)} would write.
   *
   * <p>Should the document be deleted or replaced again between the commit and this write, the files
   * are stale until the next full {@link #sync(UUID)}, which every sandbox start runs before it
   * mounts the directory: it removes them or, seeing the version marker differ from the database's,
   * rewrites them.
   */
  public Future<Path> written(UUID tenantId, Row document, String content, List<DocItem> items) {
    return inTurn(tenantId, () -> vertx.executeBlocking(() -> {
      if (!deletedTenants.contains(tenantId)) {
        write(tenantId, document.getUUID("id"), rendered(document, content, items));
      }
      return tenantDir(tenantId);
    }, false));
  }

  /**
   * Removes one deleted document's files, without looking at the tenant's others. Ordered with the
   * tenant's other syncs.
   */
  public Future<Path> deleted(UUID tenantId, UUID documentId) {
    return inTurn(tenantId, () -> vertx.executeBlocking(() -> {
      if (deletedTenants.contains(tenantId)) {
        return tenantDir(tenantId);
      }
      String name = documentId.toString();
      knownOf(tenantId).remove(documentId);
      deleteRecursively(tenantDir(tenantId).resolve(name));
      Files.deleteIfExists(stateDir(tenantId).resolve(name));
      return tenantDir(tenantId);
    }, false));
  }

  /** One of a document's files, opened for reading, and its size. */
  public record OpenedFile(AsyncFile file, long size) {}

  /** Opens tried when a write of the document renamed its directory away between the check and the open. */
  private static final int OPEN_TRIES = 3;

  /**
   * One of a document's files ({@link #FILES}) opened for reading, as of the version the database
   * holds when asked (or a later one); empty when the tenant has no such document. This is what the
   * API serves a document's items, text and table of contents from: the same bytes, rendered once a
   * version, read as the client takes them, with no database connection held and nothing of the
   * document in memory. A document this replica's copy lacks or holds at another version is written
   * first, in turn with the tenant's other writes. The open file is a snapshot: a later version is
   * renamed into place beside it, never written into it.
   */
  public Future<Optional<OpenedFile>> open(UUID tenantId, UUID documentId, String name) {
    if (!FILES.contains(name)) {
      throw new IllegalArgumentException("not a document file: " + name);
    }
    return open(tenantId, documentId, name, OPEN_TRIES);
  }

  private Future<Optional<OpenedFile>> open(UUID tenantId, UUID documentId, String name, int tries) {
    return Database.inTenant(pool, tenantId,
            conn -> conn.preparedQuery(Sql.DOCUMENT_VERSION).execute(Tuple.of(tenantId, documentId)))
        .compose(rows -> {
          if (rows.size() == 0) {
            return Future.succeededFuture(Optional.<OpenedFile>empty());
          }
          String marker = marker(rows.iterator().next());
          Path dir = tenantDir(tenantId).resolve(documentId.toString());
          return vertx.executeBlocking(() -> current(tenantId, documentId, marker), false)
              .compose(current -> current ? Future.succeededFuture(dir) : inTurn(tenantId,
                  () -> vertx.executeBlocking(() -> current(tenantId, documentId, marker), false)
                      .compose(now -> now ? Future.succeededFuture(dir)
                          : materialise(tenantId, List.of(documentId)).map(dir))))
              .compose(d -> vertx.fileSystem().open(d.resolve(name).toString(),
                  new OpenOptions().setRead(true).setWrite(false).setCreate(false)))
              .compose(file -> file.size().map(size -> new OpenedFile(file, size))
                  .recover(e -> file.close().transform(closed -> Future.<OpenedFile>failedFuture(e))))
              .map(Optional::of)
              .recover(e -> renamedAway(e) && tries > 1 ? open(tenantId, documentId, name, tries - 1)
                  : Future.failedFuture(e));
        });
  }

  /** Whether a document's copy here is at {@code marker} (its directory may hold a later one, being written). */
  private boolean current(UUID tenantId, UUID documentId, String marker) throws IOException {
    Path docDir = tenantDir(tenantId).resolve(documentId.toString());
    Known k = knownOf(tenantId).get(documentId);
    FileTime modified = modified(docDir);
    if (k != null && modified != null && k.marker().equals(marker) && modified.equals(k.modified())) {
      return true;
    }
    return upToDate(docDir, stateDir(tenantId).resolve(documentId.toString()), marker);
  }

  /** A file not found: its directory was between two versions, or the document went meanwhile. */
  private static boolean renamedAway(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof java.nio.file.NoSuchFileException) {
        return true;
      }
    }
    return false;
  }

  private Map<UUID, Known> knownOf(UUID tenantId) {
    return known.computeIfAbsent(tenantId, t -> new ConcurrentHashMap<>());
  }

  /** The directory's modification time, or null when it is not there. */
  private static FileTime modified(Path dir) {
    try {
      return Files.getLastModifiedTime(dir, LinkOption.NOFOLLOW_LINKS);
    } catch (IOException e) {
      return null;
    }
  }

  record Version(UUID id, String marker, int itemCount) {}

  private Future<Path> syncNow(UUID tenantId) {
    return Database.inTenant(pool, tenantId,
            conn -> conn.preparedQuery(Sql.LIST_DOCUMENT_VERSIONS).execute(Tuple.of(tenantId)))
        .map(rows -> {
          List<Version> versions = new ArrayList<>(rows.size());
          rows.forEach(r -> versions.add(new Version(r.getUUID("id"), marker(r), r.getInteger("item_count"))));
          return versions;
        })
        .compose(versions -> vertx.executeBlocking(() -> staleAndChanged(tenantId, versions), false))
        .compose(changed -> {
          Future<Void> chain = Future.succeededFuture();
          for (List<UUID> batch : batches(changed)) {
            chain = chain.compose(v -> materialise(tenantId, batch));
          }
          return chain;
        })
        .map(v -> tenantDir(tenantId));
  }

  /** Documents read from the database at once when a sync writes many. */
  static final int BATCH_DOCUMENTS = 64;
  /** ... and the items a batch may hold, which bounds the memory a batch takes. */
  static final int BATCH_ITEMS = 20_000;

  /** The documents to write, in batches of at most BATCH_DOCUMENTS and (but for one) BATCH_ITEMS. */
  static List<List<UUID>> batches(List<Version> changed) {
    List<List<UUID>> out = new ArrayList<>();
    List<UUID> batch = new ArrayList<>();
    long items = 0;
    for (Version v : changed) {
      if (!batch.isEmpty() && (batch.size() == BATCH_DOCUMENTS || items + v.itemCount() > BATCH_ITEMS)) {
        out.add(batch);
        batch = new ArrayList<>();
        items = 0;
      }
      batch.add(v.id());
      items += v.itemCount();
    }
    if (!batch.isEmpty()) {
      out.add(batch);
    }
    return out;
  }

  private static String marker(Row r) {
    return r.getInteger("version") + " " + r.getString("content_hash");
  }

  /** Removes directories of documents that are gone; returns the documents to (re)write. */
  private List<Version> staleAndChanged(UUID tenantId, List<Version> versions) throws IOException {
    refuseDeleted(tenantId);
    Path dir = tenantDir(tenantId);
    Path state = stateDir(tenantId);
    Files.createDirectories(dir);
    Files.createDirectories(state);
    Files.createDirectories(stagingDir());
    Set<String> live = new HashSet<>();
    versions.forEach(v -> live.add(v.id().toString()));
    for (Path parent : List.of(dir, state)) {
      try (Stream<Path> entries = Files.list(parent)) {
        for (Path p : entries.toList()) {
          if (!live.contains(p.getFileName().toString())) {
            deleteRecursively(p);
          }
        }
      }
    }
    Map<UUID, Known> knownHere = knownOf(tenantId);
    knownHere.keySet().removeIf(id -> !live.contains(id.toString()));
    List<Version> changed = new ArrayList<>();
    for (Version v : versions) {
      Path docDir = dir.resolve(v.id().toString());
      FileTime modified = modified(docDir);
      Known k = knownHere.get(v.id());
      if (k != null && modified != null && k.marker().equals(v.marker()) && modified.equals(k.modified())) {
        continue;
      }
      if (upToDate(docDir, state.resolve(v.id().toString()), v.marker())) {
        knownHere.put(v.id(), new Known(v.marker(), modified));
      } else {
        knownHere.remove(v.id());
        changed.add(v);
      }
    }
    return changed;
  }

  private static boolean upToDate(Path docDir, Path markerFile, String marker) throws IOException {
    if (!Files.isRegularFile(markerFile) || !Files.readString(markerFile).equals(marker)) {
      return false;
    }
    for (String f : FILES) {
      if (!Files.isRegularFile(docDir.resolve(f))) {
        return false;
      }
    }
    return true;
  }

  /**
   * Writes a batch of documents from the database: their rows and their items read in one
   * transaction (two statements, pipelined), so each document's row and items agree.
   */
  private Future<Void> materialise(UUID tenantId, List<UUID> documentIds) {
    Tuple key = Tuple.tuple().addUUID(tenantId).addArrayOfUUID(documentIds.toArray(new UUID[0]));
    record Read(RowSet<Row> docRows, RowSet<Row> itemRows) {}
    return Database.inTenant(pool, tenantId, conn -> {
          Future<RowSet<Row>> docQuery = conn.preparedQuery(Sql.GET_DOCUMENTS_FILES).execute(key);
          Future<RowSet<Row>> itemQuery = conn.preparedQuery(Sql.LIST_ITEMS_OF_DOCUMENTS).execute(key);
          return Future.all(docQuery, itemQuery).map(both -> new Read(docQuery.result(), itemQuery.result()));
        })
        .compose(read -> {
          Map<UUID, List<DocItem>> items = new HashMap<>();
          read.itemRows().forEach(r ->
              items.computeIfAbsent(r.getUUID("document_id"), id -> new ArrayList<>()).add(DocumentStore.item(r)));
          // A document deleted since the listing has no row; the next sync cleans up after it.
          List<Row> docs = new ArrayList<>();
          read.docRows().forEach(docs::add);
          return vertx.executeBlocking(() -> {
            for (Row doc : docs) {
              UUID id = doc.getUUID("id");
              write(tenantId, id, rendered(doc, doc.getString("content"), items.getOrDefault(id, List.of())));
            }
            return null;
          }, false);
        });
  }

  /** The four files of one document, rendered, plus its version marker. */
  private record Rendered(String metadata, String content, String items, String toc, String marker) {}

  /**
   * A document's files from its row (the columns of {@link #WRITTEN_COLUMNS}), its content and its
   * items: the one rendering, whether a sync read them or an ingest just wrote them.
   */
  private static Rendered rendered(Row document, String content, List<DocItem> items) {
    return new Rendered(metadata(document), content, itemsJsonl(items), document.getJsonObject("toc").encode(),
        marker(document));
  }

  static String metadata(Row doc) {
    OffsetDateTime created = doc.getOffsetDateTime("created_at");
    return new JsonObject()
        .put("id", doc.getUUID("id").toString())
        .put("title", doc.getString("title"))
        .put("uri", doc.getString("uri"))
        .put("created_at", created.toInstant().toString())
        .encode();
  }

  /** items.jsonl of docs/CONTRACT.md, one line per item; the API serves exactly these bytes. */
  public static String itemsJsonl(List<DocItem> items) {
    StringBuilder sb = new StringBuilder();
    for (DocItem it : items) {
      sb.append(it.toJson().encode()).append('\n');
    }
    return sb.toString();
  }

  /** Writes into a staging directory, then renames it into place: readers see old or new, whole. */
  private void write(UUID tenantId, UUID documentId, Rendered files) throws IOException {
    refuseDeleted(tenantId);
    String name = documentId.toString();
    Files.createDirectories(tenantDir(tenantId));
    Files.createDirectories(stateDir(tenantId));
    Files.createDirectories(stagingDir());
    Path staging = Files.createTempDirectory(stagingDir(), tenantId + "-" + name + "-");
    // A temporary directory is private (0700), but sandboxes read it as another user once it is in place.
    Files.setPosixFilePermissions(staging, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
    // Nobody reads the staging directory, so its files need no rename of their own.
    Files.writeString(staging.resolve("metadata.json"), files.metadata(), StandardCharsets.UTF_8);
    Files.writeString(staging.resolve("content.txt"), files.content(), StandardCharsets.UTF_8);
    Files.writeString(staging.resolve("items.jsonl"), files.items(), StandardCharsets.UTF_8);
    Files.writeString(staging.resolve("toc.json"), files.toc(), StandardCharsets.UTF_8);
    Path target = tenantDir(tenantId).resolve(name);
    if (Files.exists(target)) {
      // POSIX rename cannot swap two directories, so the old one steps aside first; a reader may
      // miss the document for that instant but never sees a mix of two versions.
      Path old = Files.createTempDirectory(stagingDir(), "old-" + name + "-");
      Files.move(target, old.resolve(name), StandardCopyOption.ATOMIC_MOVE);
      Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
      deleteRecursively(old);
    } else {
      Files.move(staging, target, StandardCopyOption.ATOMIC_MOVE);
    }
    writeAtomically(stateDir(tenantId).resolve(name), files.marker());
    knownOf(tenantId).put(documentId, new Known(files.marker(), modified(target)));
  }

  /** Stops a sync of a tenant deleted while it ran, before it creates any of its directories. */
  private void refuseDeleted(UUID tenantId) {
    if (deletedTenants.contains(tenantId)) {
      throw new IllegalStateException("tenant " + tenantId + " was deleted");
    }
  }

  /** A temporary file in the same directory, then an atomic rename over the target. */
  static void writeAtomically(Path target, String text) throws IOException {
    Path tmp = Files.createTempFile(target.getParent(), "." + target.getFileName(), ".tmp");
    try {
      Files.writeString(tmp, text, StandardCharsets.UTF_8);
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE,
          StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(tmp);
    }
  }

  private static void deleteRecursively(Path p) throws IOException {
    if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(p)) {
      for (Path q : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(q);
      }
    } catch (UncheckedIOException e) {
      throw e.getCause();
    }
  }
}
