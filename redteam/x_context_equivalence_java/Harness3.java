package dev.quarry.search;

import dev.quarry.config.Config;
import dev.quarry.store.Database;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.sqlclient.Pool;
import java.nio.file.*;
import java.util.*;

/** Vector rankings: database (pgvector HNSW) against the vector copy, per query. */
public class Harness3 {
  public static void main(String[] a) throws Exception {
    UUID tenant = UUID.fromString(a[0]);
    int n = Integer.parseInt(a[1]);
    Map<String, String> env = new HashMap<>(System.getenv());
    env.put("QUARRY_PG_DATABASE", "quarry_ctx5");
    env.put("QUARRY_ADMIN_TOKEN", "ctx5-admin-token-0123456789abcdef");
    Config config = Config.fromEnv(env);
    Vertx vertx = Vertx.vertx();
    Pool pool = Database.pool(vertx, config);
    Embedder embedder = Embedders.fromConfig(config);
    SearchService base = Harness2.make(vertx, pool, embedder, config, false, false, false);
    SearchService vec = Harness2.make(vertx, pool, embedder, config, false, true, false);
    Harness2.clock.addAndGet(3_600_000_000_000L);
    vec.vectorIndexes().refresh(tenant, -1).await();
    JsonArray qs = new JsonArray(Files.readString(Path.of("/tmp/ctx5-var/queries.json")));
    // exact cosine over every chunk vector
    List<UUID> ids = new ArrayList<>(); List<float[]> vs = new ArrayList<>();
    for (var r : pool.withTransaction(c -> c.query(Database.setTenant(tenant)).execute().compose(x -> c.query("SELECT id, embedding::text FROM chunks").execute())).await()) {
      ids.add(r.getUUID(0)); String[] p = r.getString(1).replaceAll("[\\[\\]]", "").split(",");
      float[] v = new float[p.length]; for (int j = 0; j < p.length; j++) v[j] = Float.parseFloat(p[j]); vs.add(v);
    }
    int recallDb = 0, recallCopy = 0, total = 0;
    int sameSet = 0, differentSet = 0;
    double maxScoreDiff = 0;
    for (int i = 0; i < qs.size(); i++) {
      String q = qs.getJsonArray(i).getString(0);
      List<RankedChunk> d = base.rank(tenant, q, SearchMode.VECTOR, n).await();
      List<RankedChunk> m = vec.rank(tenant, q, SearchMode.VECTOR, n).await();
      float[] qv = embedder.embedQuery(SearchQuery.of(q).embedded());
      Integer[] order = new Integer[ids.size()]; double[] cos = new double[ids.size()];
      for (int j = 0; j < ids.size(); j++) { order[j] = j; double dot = 0, na = 0, nb = 0; float[] v = vs.get(j);
        for (int t = 0; t < v.length; t++) { dot += v[t] * qv[t]; na += v[t] * v[t]; nb += qv[t] * qv[t]; } cos[j] = dot / Math.sqrt(na * nb); }
      Arrays.sort(order, (x, y) -> Double.compare(cos[y], cos[x]));
      Set<UUID> exact = new HashSet<>(); for (int j = 0; j < Math.min(n, order.length); j++) exact.add(ids.get(order[j]));
      for (RankedChunk c : d) if (exact.contains(c.chunkId())) recallDb++;
      for (RankedChunk c : m) if (exact.contains(c.chunkId())) recallCopy++;
      total += exact.size();
      Map<UUID, Double> ds = new HashMap<>();
      for (RankedChunk c : d) ds.put(c.chunkId(), c.score());
      int common = 0;
      for (RankedChunk c : m) {
        Double s = ds.get(c.chunkId());
        if (s != null) { common++; maxScoreDiff = Math.max(maxScoreDiff, Math.abs(s - c.score())); }
      }
      if (common == d.size() && d.size() == m.size()) sameSet++;
      else {
        differentSet++;
        if (differentSet <= 0) {
          double dLast = d.isEmpty() ? 0 : d.get(d.size() - 1).score(), mLast = m.isEmpty() ? 0 : m.get(m.size() - 1).score();
          System.out.printf("query %s: database %d, copy %d, common %d; lowest database %.6f copy %.6f%n", q, d.size(), m.size(), common, dLast, mLast);
          for (RankedChunk c : m) if (!ds.containsKey(c.chunkId())) System.out.printf("   only in copy: %s %.6f%n", c.chunkId(), c.score());
          Set<UUID> ms = new HashSet<>(); for (RankedChunk c : m) ms.add(c.chunkId());
          for (RankedChunk c : d) if (!ms.contains(c.chunkId())) System.out.printf("   only in database: %s %.6f%n", c.chunkId(), c.score());
        }
      }
    }
    System.out.printf("top %d exact-neighbour recall: database (pgvector HNSW) %d/%d, copy (Lucene HNSW) %d/%d%n", n, recallDb, total, recallCopy, total);
    System.out.printf("top %d: same set %d, different %d, max score diff on common chunks %.2e%n", n, sameSet, differentSet, maxScoreDiff);
    vertx.close().await();
    System.exit(0);
  }
}
