package dev.quarry.bench;

import dev.quarry.store.Database;
import dev.quarry.store.DocumentStore;
import dev.quarry.store.DocumentsFs;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Arrays;
import java.util.Comparator;
import java.util.Locale;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * The {@code /documents} tree of a large tenant: what a full sync costs (every sandbox start runs
 * one before it mounts the tree) when nothing changed, in a process that wrote the files and in a
 * new process that has to check every file, and what deleting one document costs.
 */
public final class DocumentsFsBench {
  /** Documents of the tenant; -Dbench.documents.n overrides. */
  static final int DOCUMENTS = Integer.getInteger("bench.documents.n", 5_000);
  static final int RUNS = 9;

  public String run() throws Exception {
    UUID tenant = Tenants.DEFAULT;
    Path root = Files.createTempDirectory("quarry-bench-documents");
    try (BenchDatabase db = BenchDatabase.fresh("documents", true)) {
      try (Connection c = db.jdbc(); Statement s = c.createStatement()) {
        // Small documents of one item each: the sync's cost is per document, not per byte.
        s.execute("INSERT INTO documents (id, tenant_id, title, uri, source_type, content_hash, byte_size,"
            + " content, toc, item_count, chunk_count) SELECT gen_random_uuid(), '" + tenant + "',"
            + " 'Report ' || g, 'reports/' || g || '.txt', 'text', md5(g::text), 40, 'Report ' || g"
            + " || ' says little.', '{\"doc_id\": null, \"tree\": []}', 1, 0"
            + " FROM generate_series(1, " + DOCUMENTS + ") g");
        s.execute("INSERT INTO items (tenant_id, document_id, position, self_ref, label, text, page_numbers,"
            + " heading_level, tree_depth, section_start, section_end) SELECT tenant_id, id, 0, '#/texts/0',"
            + " 'text', content, '{}', 0, 1, 0, 1 FROM documents");
      }
      Vertx vertx = Vertx.vertx();
      Pool pool = Database.pool(vertx, db.config());
      try {
        DocumentsFs fs = new DocumentsFs(vertx, pool, root);
        double first = millis(() -> fs.sync(tenant).await());
        double[] known = new double[RUNS];
        double[] fresh = new double[RUNS];
        for (int i = 0; i < RUNS; i++) {
          // Alternating, so that the machine's load falls on both alike.
          known[i] = millis(() -> fs.sync(tenant).await());
          DocumentsFs newProcess = new DocumentsFs(vertx, pool, root);
          fresh[i] = millis(() -> newProcess.sync(tenant).await());
        }
        UUID victim;
        try (Connection c = db.jdbc(); Statement s = c.createStatement();
            ResultSet rs = s.executeQuery("SELECT id FROM documents ORDER BY id LIMIT 1")) {
          rs.next();
          victim = rs.getObject(1, UUID.class);
        }
        DocumentStore store = new DocumentStore(pool, fs);
        double delete = millis(() -> store.delete(tenant, victim).await());
        double afterDelete = millis(() -> fs.sync(tenant).await());
        long left;
        try (Stream<Path> entries = Files.list(fs.tenantDir(tenant))) {
          left = entries.count();
        }
        if (left != DOCUMENTS - 1) {
          throw new IllegalStateException("the tree has " + left + " documents, not " + (DOCUMENTS - 1));
        }
        System.out.printf(Locale.ROOT, "  documents: first sync %.0f ms; unchanged: %.0f ms (this process)"
            + " against %.0f ms (a new one); delete %.1f ms%n", first, median(known), median(fresh), delete);
        return report(first, known, fresh, delete, afterDelete);
      } finally {
        pool.close().await();
        vertx.close().await();
      }
    } finally {
      try (Stream<Path> walk = Files.walk(root)) {
        for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  private String report(double first, double[] known, double[] fresh, double delete, double afterDelete) {
    StringBuilder md = new StringBuilder();
    md.append(String.format(Locale.ROOT, """
        One tenant with %,d documents of one item each, in a fresh database; `DocumentsFs` writes the
        tree under a temporary directory. Every sandbox start runs a full sync of its tenant's tree
        before it mounts it; here nothing changed between syncs. "This process" wrote the files and
        remembers each document's version marker and its directory's modification time, so it checks
        a document with one stat; "a new process" (a restarted gateway) reads every marker and tests
        every file. The two alternate, %d runs each; the table gives the median and the range.

        | sync | ms (median) | min | max |
        |---|---:|---:|---:|
        """, DOCUMENTS, RUNS));
    md.append(row("first sync: writes every document's four files", new double[] {first}));
    md.append(row("unchanged, this process", known));
    md.append(row("unchanged, a new process", fresh));
    md.append(row("DocumentStore.delete of one document (its files only)", new double[] {delete}));
    md.append(row("full sync after that delete", new double[] {afterDelete}));
    md.append(String.format(Locale.ROOT, "%nAn unchanged tree syncs %.1fx faster in the process that wrote it.%n",
        median(fresh) / median(known)));
    return md.toString();
  }

  private static String row(String what, double[] ms) {
    double[] sorted = ms.clone();
    Arrays.sort(sorted);
    return String.format(Locale.ROOT, "| %s | %.1f | %.1f | %.1f |%n", what, median(ms), sorted[0],
        sorted[sorted.length - 1]);
  }

  private static double median(double[] ms) {
    double[] sorted = ms.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  private interface Step {
    void run() throws Exception;
  }

  private static double millis(Step step) throws Exception {
    long start = System.nanoTime();
    step.run();
    return (System.nanoTime() - start) / 1e6;
  }
}
