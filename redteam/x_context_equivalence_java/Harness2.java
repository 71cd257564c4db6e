package dev.quarry.search;

import dev.quarry.config.Config;
import dev.quarry.store.Database;
import dev.quarry.telemetry.QuarryMetrics;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.sqlclient.Pool;
import java.lang.reflect.Constructor;
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The gateway comparison's queries through SearchService, memory=0 against services whose copies are
 * switched on one kind at a time: which copy makes the results differ.
 */
public class Harness2 {
  static final AtomicLong clock = new AtomicLong();

  public static void main(String[] a) throws Exception {
    UUID tenant = UUID.fromString(a[0]);
    int budget = Integer.parseInt(a[1]);
    Map<String, String> env = new HashMap<>(System.getenv());
    env.put("QUARRY_PG_DATABASE", "quarry_ctx5");
    env.put("QUARRY_CONTEXT_BUDGET_CHARS", "" + budget);
    env.put("QUARRY_ADMIN_TOKEN", "ctx5-admin-token-0123456789abcdef");
    Config config = Config.fromEnv(env);
    Vertx vertx = Vertx.vertx();
    Pool pool = Database.pool(vertx, config);
    Embedder embedder = Embedders.fromConfig(config);
    JsonArray qs = new JsonArray(Files.readString(Path.of("/tmp/ctx5-var/queries.json")));
    SearchService base = make(vertx, pool, embedder, config, false, false, false);
    String[] names = {"contexts only", "terms+contexts", "vectors+contexts", "all three"};
    boolean[][] on = {{false, false, true}, {true, false, true}, {false, true, true}, {true, true, true}};
    List<List<SearchHit>> expected = new ArrayList<>();
    for (int i = 0; i < qs.size(); i++) expected.add(base.search(tenant, req(qs.getJsonArray(i))).await());
    for (int v = 0; v < names.length; v++) {
      QuarryMetrics metrics = new QuarryMetrics();
      SearchService s = make(vertx, pool, embedder, config, on[v][0], on[v][1], on[v][2], metrics);
      clock.addAndGet(3_600_000_000_000L);
      if (on[v][0]) s.termIndexes().refresh(tenant, -1).await();
      if (on[v][1]) s.vectorIndexes().refresh(tenant, -1).await();
      s.contextIndexes().refresh(tenant, -1).await();
      int exact = 0, within = 0, fieldsDiffer = 0;
      String firstDiff = null;
      for (int i = 0; i < qs.size(); i++) {
        List<SearchHit> e = expected.get(i), x = s.search(tenant, req(qs.getJsonArray(i))).await();
        if (e.equals(x)) { exact++; continue; }
        boolean sameFields = e.size() == x.size();
        boolean close = sameFields;
        for (int h = 0; sameFields && h < e.size(); h++) {
          sameFields &= unscored(e.get(h)).equals(unscored(x.get(h)));
          close &= Math.abs(e.get(h).score() - x.get(h).score()) <= 1e-5;
        }
        if (sameFields && close) within++;
        else {
          fieldsDiffer++;
          if (firstDiff == null) firstDiff = qs.getJsonArray(i).encode();
        }
      }
      var mem = metrics.registry().find("quarry_search_context_expansions").tag("source", "memory").counter();
      var db = metrics.registry().find("quarry_search_context_expansions").tag("source", "database").counter();
      System.out.printf("budget %d, %-17s: queries %d exact %d scores-within-1e-5 %d different %d (expansions memory %.0f database %.0f) first: %s%n",
          budget, names[v], qs.size(), exact, within, fieldsDiffer, mem == null ? 0 : mem.count(), db == null ? 0 : db.count(), firstDiff);
    }
    vertx.close().await();
    System.exit(0);
  }

  static SearchRequest req(JsonArray q) {
    Set<UUID> scope = new HashSet<>();
    if (q.getValue(2) != null) for (Object o : q.getJsonArray(2)) scope.add(UUID.fromString((String) o));
    return new SearchRequest(q.getString(0), q.getInteger(1), scope);
  }

  static SearchHit unscored(SearchHit h) {
    return new SearchHit(h.chunkId(), h.content(), h.documentId(), h.documentTitle(), h.documentUri(), 0,
        h.pageNumbers(), h.headings(), h.docItemRefs(), h.labels());
  }

  static SearchService make(Vertx vertx, Pool pool, Embedder e, Config c, boolean t, boolean v, boolean x) throws Exception {
    return make(vertx, pool, e, c, t, v, x, new QuarryMetrics());
  }

  static SearchService make(Vertx vertx, Pool pool, Embedder e, Config c, boolean t, boolean v, boolean x, QuarryMetrics m) throws Exception {
    TenantCopies on = new TenantCopies(pool, 256L << 20, clock::get);
    TenantCopies off = new TenantCopies(pool, 0, clock::get);
    Constructor<SearchService> k = SearchService.class.getDeclaredConstructor(Vertx.class, Pool.class, Embedder.class,
        Config.class, int.class, QuarryMetrics.class, TermIndexes.class, VectorIndexes.class, ContextIndexes.class);
    k.setAccessible(true);
    return k.newInstance(vertx, pool, e, c, SearchService.POSTING_BUDGET, m, new TermIndexes(t ? on : off),
        new VectorIndexes(v ? on : off, e.modelName(), e.dimensions()), new ContextIndexes(x ? on : off));
  }
}
