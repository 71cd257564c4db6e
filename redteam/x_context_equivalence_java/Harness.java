package dev.quarry.search;

import dev.quarry.search.ContextExpander.RankedHit;
import dev.quarry.store.Database;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.*;
import java.lang.reflect.Method;
import java.util.*;

/** Every chunk of a tenant (alone, and in random fused lists) expanded by ContextIndex and by fusedExpanded. */
public class Harness {
  public static void main(String[] a) throws Exception {
    UUID tenant = UUID.fromString(a[0]);
    int[] budgets = Arrays.stream(a[1].split(",")).mapToInt(Integer::parseInt).toArray();
    Vertx vertx = Vertx.vertx();
    Pool pool = PgBuilder.pool().connectingTo(new PgConnectOptions().setHost("127.0.0.1").setPort(5432)
        .setDatabase("quarry_ctx5").setUser("quarry").setPassword("quarry")).with(new PoolOptions().setMaxSize(2)).using(vertx).build();
    SearchSql sql = new SearchSql("bge-small-en-v1.5-q", 384);
    Method rankedHit = SearchService.class.getDeclaredMethod("rankedHit", Row.class);
    rankedHit.setAccessible(true);
    long version = pool.withTransaction(c -> c.query(Database.setTenant(tenant)).execute().compose(x -> c.query("SELECT term_version FROM corpus_stats WHERE tenant_id = '" + tenant + "'").execute()))
        .await().iterator().next().getLong(0);
    ContextIndex index = pool.withTransaction(c -> c.query(Database.setTenant(tenant)).execute()
        .compose(x -> ContextIndexes.KIND.read(c, tenant, version))).await().get();
    System.out.println(index);
    List<UUID> chunks = new ArrayList<>();
    for (Row r : pool.withTransaction(c -> c.query(Database.setTenant(tenant)).execute().compose(x -> c.query("SELECT id FROM chunks WHERE tenant_id = '" + tenant + "' ORDER BY id").execute())).await()) {
      chunks.add(r.getUUID(0));
    }
    Random random = new Random(5);
    List<List<Fusion.Scored<UUID>>> lists = new ArrayList<>();
    for (UUID c : chunks) {
      lists.add(List.of(new Fusion.Scored<>(c, 0.5)));
    }
    for (int i = 0; i < 300; i++) {
      List<Fusion.Scored<UUID>> l = new ArrayList<>();
      int n = 1 + random.nextInt(40);
      for (int k = 0; k < n; k++) {
        double s = random.nextInt(4) == 0 ? 0.25 : random.nextDouble(); // some ties
        l.add(new Fusion.Scored<>(chunks.get(random.nextInt(chunks.size())), s));
      }
      // distinct ids as the fusion gives them
      Map<UUID, Fusion.Scored<UUID>> m = new LinkedHashMap<>();
      for (var s : l) m.putIfAbsent(s.id(), s);
      lists.add(new ArrayList<>(m.values()));
    }
    for (int budget : budgets) {
      int same = 0, diff = 0;
      for (List<Fusion.Scored<UUID>> l : lists) {
        Tuple t = Tuple.tuple();
        for (SearchSql.Param p : sql.fusedExpanded.params()) {
          switch (p) {
            case TENANT -> t.addUUID(tenant);
            case BUDGET -> t.addInteger(budget);
            case IDS -> t.addArrayOfUUID(l.stream().map(Fusion.Scored::id).toArray(UUID[]::new));
            case SCORES -> t.addArrayOfDouble(l.stream().map(Fusion.Scored::score).toArray(Double[]::new));
            default -> throw new IllegalStateException("" + p);
          }
        }
        RowSet<Row> rows = pool.withTransaction(c -> c.query(Database.setTenant(tenant)).execute()
            .compose(x -> c.preparedQuery(sql.fusedExpanded.sql()).execute(t))).await();
        List<RankedHit> expected = new ArrayList<>();
        for (Row r : rows) expected.add((RankedHit) rankedHit.invoke(null, r));
        List<RankedHit> actual = index.hits(l, budget);
        if (expected.equals(actual)) { same++; continue; }
        diff++;
        if (diff <= 5) {
          System.out.println("DIFF budget " + budget + " list " + l.size() + " first " + l.get(0).id());
          for (int i = 0; i < Math.max(expected.size(), actual.size()); i++) {
            RankedHit e = i < expected.size() ? expected.get(i) : null, x = i < actual.size() ? actual.get(i) : null;
            if (!Objects.equals(e, x)) {
              System.out.println("  [" + i + "] SQL: " + e + "\n  [" + i + "] MEM: " + x);
              break;
            }
          }
        }
      }
      System.out.println("budget " + budget + ": lists " + lists.size() + " identical " + same + " different " + diff);
    }
    vertx.close().await();
  }
}
