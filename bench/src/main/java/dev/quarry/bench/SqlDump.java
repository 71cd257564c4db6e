package dev.quarry.bench;

import dev.quarry.search.OnnxEmbedder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes pgbench scripts of one search statement for bench queries, parameters as literals (as a
 * custom plan sees them), each in the transaction search runs it in. With the scripts of two
 * builds' statements given to one pgbench run, pgbench picks among them at random, so both variants
 * are timed under the same load, without the JVM or HTTP: {@code pgbench -n -r -T 60 -f ...}.
 *
 * <p>{@code SqlDump OUT_DIR FIELD FIRST COUNT}: FIELD names a statement of SearchSql (read by
 * reflection, so the same dump runs against an older build's classes); queries FIRST..FIRST+COUNT-1
 * of the Vaswani then Cranfield queries.
 */
public final class SqlDump {
  private SqlDump() {}

  public static void main(String[] args) throws Exception {
    Path out = Path.of(args[0]);
    String field = args[1];
    int first = Integer.parseInt(args[2]);
    int count = Integer.parseInt(args[3]);
    BenchPaths paths = BenchPaths.detect();
    OnnxEmbedder model = new OnnxEmbedder();
    TestCollection vaswani = TestCollections.vaswani(paths.retrieval());
    TestCollection cranfield = TestCollections.cranfield(paths.retrieval());
    VectorCache.Vectors vv = VectorCache.load(paths.work().resolve("embeddings"), vaswani, model);
    VectorCache.Vectors cv = VectorCache.load(paths.work().resolve("embeddings"), cranfield, model);
    List<String> queries = new ArrayList<>();
    vaswani.queries().forEach(q -> queries.add(q.text()));
    cranfield.queries().forEach(q -> queries.add(q.text()));
    List<float[]> vectors = new ArrayList<>(vv.queries());
    vectors.addAll(cv.queries());

    Class<?> sqlClass = Class.forName("dev.quarry.search.SearchSql");
    var ctor = sqlClass.getDeclaredConstructor(String.class, int.class);
    ctor.setAccessible(true);
    Object sql = ctor.newInstance(OnnxEmbedder.BGE_SMALL, 384);
    var f = sqlClass.getDeclaredField(field);
    f.setAccessible(true);
    Object statement = f.get(sql);
    var sqlText = statement.getClass().getDeclaredMethod("sql");
    var params = statement.getClass().getDeclaredMethod("params");
    sqlText.setAccessible(true);
    params.setAccessible(true);
    Files.createDirectories(out);
    for (int q = first; q < first + count; q++) {
      String text = (String) sqlText.invoke(statement);
      List<?> names = (List<?>) params.invoke(statement);
      // -Ddump.prepared: PREPARE with bound parameters, then EXPLAIN ANALYZE EXECUTE, as the
      // gateway's client runs it (a custom plan per execution), instead of literals.
      boolean prepared = Boolean.getBoolean("dump.prepared");
      String raw = text;
      List<String> literals = new ArrayList<>();
      for (int i = names.size(); i >= 1; i--) {
        String literal = switch (names.get(i - 1).toString()) {
          case "TENANT" -> "'00000000-0000-0000-0000-000000000001'::uuid";
          case "QUERY" -> "'" + queries.get(q).replace("'", "''") + "'::text";
          case "VECTOR" -> "'" + QuarryCorpus.vectorLiteral(vectors.get(q)) + "'::text";
          case "SCOPE" -> "NULL::uuid[]";
          case "CANDIDATES" -> "100";
          case "POSTINGS" -> System.getProperty("dump.postings", "3000");
          case "PERTERM" -> System.getProperty("dump.perterm", "300");
          case "FUSED" -> "15";
          case "POOL" -> "300";
          case "BUDGET" -> "2000";
          default -> throw new IllegalStateException(names.get(i - 1).toString());
        };
        text = text.replace("$" + i, literal);
        literals.add(0, literal);
      }
      if (prepared) {
        Files.writeString(out.resolve("q" + q + ".sql"), String.join("\n",
            "BEGIN;",
            "SET LOCAL quarry.tenant_id = '00000000-0000-0000-0000-000000000001';",
            "SET LOCAL hnsw.iterative_scan = relaxed_order;",
            "SET LOCAL hnsw.ef_search = 100;",
            "SET LOCAL jit = off;",
            "SET LOCAL plan_cache_mode = force_custom_plan;",
            "PREPARE s AS " + raw.replaceAll("\\s*\n\\s*", " ") + ";",
            "EXPLAIN (ANALYZE, BUFFERS) EXECUTE s(" + String.join(", ", literals) + ");",
            "ROLLBACK;", ""));
        continue;
      }
      // pgbench reads one statement per line (a line without ';' continues it).
      String oneLine = text.replaceAll("\\s*\n\\s*", " ");
      Files.writeString(out.resolve("q" + q + ".sql"), String.join("\n",
          "BEGIN;",
          "SET LOCAL quarry.tenant_id = '00000000-0000-0000-0000-000000000001';",
          "SET LOCAL hnsw.iterative_scan = relaxed_order;",
          "SET LOCAL hnsw.ef_search = 100;",
          "SET LOCAL jit = off;",
          oneLine + ";",
          "COMMIT;", ""));
    }
    System.exit(0);
  }
}
