package dev.quarry.ingest;

import dev.quarry.search.Embedder;
import dev.quarry.search.OnnxEmbedder;
import dev.quarry.support.DelegatingEmbedder;
import dev.quarry.support.TestDatabase;
import io.vertx.core.Future;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/** What the pipeline tests share: the real embedder (loaded once), tenants, row counts. */
public final class IngestFixture {
  private static Embedder onnx;

  private IngestFixture() {}

  public static synchronized Embedder embedder() {
    if (onnx == null) {
      onnx = new OnnxEmbedder();
    }
    return onnx;
  }

  public static <T> T await(Future<T> f) throws Exception {
    try {
      return f.toCompletionStage().toCompletableFuture().get(300, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception ex ? ex : e;
    }
  }

  public static UUID newTenant(TestDatabase db) throws SQLException {
    UUID id = UUID.randomUUID();
    try (Connection c = db.jdbc();
        PreparedStatement s = c.prepareStatement("INSERT INTO tenants (id, name) VALUES (?, ?)")) {
      s.setObject(1, id);
      s.setString(2, "t-" + id);
      s.executeUpdate();
    }
    return id;
  }

  /** Rows of {@code table} for the tenant, counted over JDBC, independent of the code under test. */
  public static long count(TestDatabase db, String table, UUID tenant) throws SQLException {
    try (Connection c = db.jdbc();
        PreparedStatement s = c.prepareStatement("SELECT count(*) FROM " + table + " WHERE tenant_id = ?")) {
      s.setObject(1, tenant);
      try (ResultSet r = s.executeQuery()) {
        r.next();
        return r.getLong(1);
      }
    }
  }

  public static IngestRequest text(String fileName, String uri, String body) {
    return new IngestRequest(fileName, uri, null, null, body.getBytes(StandardCharsets.UTF_8));
  }

  /** An embedder that delegates, but lets a test break it or time it. */
  public static final class Instrumented extends DelegatingEmbedder {
    private final Function<List<float[]>, List<float[]>> tamper;
    long nanos;
    int calls;

    public Instrumented(Embedder delegate, Function<List<float[]>, List<float[]>> tamper) {
      super(delegate);
      this.tamper = tamper;
    }

    @Override
    public synchronized List<float[]> embedPassages(List<String> texts) {
      long t0 = System.nanoTime();
      List<float[]> out = super.embedPassages(texts);
      nanos += System.nanoTime() - t0;
      calls++;
      return tamper.apply(out);
    }
  }
}
