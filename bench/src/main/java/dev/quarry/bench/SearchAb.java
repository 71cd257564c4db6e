package dev.quarry.bench;

import java.io.File;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;

/**
 * Two builds of Quarry's search side by side in one process, alternating query by query, so both
 * see the same load on a shared machine: for before/after figures of a change to search.
 *
 * <p>{@code SearchAb A_CLASSES A_DB B_CLASSES B_DB [rounds] [repeated|cold]}: each CLASSES is a
 * path list (':') of Quarry's compiled classes and resources (gateway, proto), each DB a database
 * already loaded (SearchLab's); the dependencies come from this process's class path and are shared,
 * so the ONNX runtime loads once. Each side is driven by reflection, since the two builds' classes
 * are different classes. Each side migrates its own database with its own migrations.
 */
public final class SearchAb {
  private SearchAb() {}

  /** One build's search, opened on its database. */
  private record Side(String name, ClassLoader loader, Object search, Method searchMethod,
      Class<?> requestClass) {
    void search(UUID tenant, String query) throws Exception {
      Thread.currentThread().setContextClassLoader(loader);
      Object request = requestClass.getConstructor(String.class, int.class).newInstance(query, 10);
      Object future = searchMethod.invoke(search, tenant, request);
      Object stage = future.getClass().getMethod("toCompletionStage").invoke(future);
      ((java.util.concurrent.CompletionStage<?>) stage).toCompletableFuture().get();
    }
  }

  public static void main(String[] args) throws Exception {
    int rounds = args.length > 4 ? Integer.parseInt(args[4]) : 3;
    boolean cold = args.length > 5 && args[5].equals("cold");
    BenchPaths paths = BenchPaths.detect();
    List<String> queries = new ArrayList<>();
    TestCollections.vaswani(paths.retrieval()).queries().forEach(q -> queries.add(q.text()));
    TestCollections.cranfield(paths.retrieval()).queries().forEach(q -> queries.add(q.text()));
    ClassLoader deps = SearchAb.class.getClassLoader();
    Side a = open("A", args[0], args[1], deps);
    Side b = open("B", args[2], args[3], deps);
    UUID tenant = UUID.fromString("00000000-0000-0000-0000-000000000001");
    for (String q : queries) {
      a.search(tenant, q);
      b.search(tenant, q);
    }
    for (int r = 0; r < rounds; r++) {
      List<Double> ta = new ArrayList<>();
      List<Double> tb = new ArrayList<>();
      for (int i = 0; i < queries.size(); i++) {
        String q = cold ? queries.get(i) + " ".repeat(r + 1) : queries.get(i);
        boolean aFirst = (i + r) % 2 == 0;
        for (Side s : aFirst ? List.of(a, b) : List.of(b, a)) {
          long start = System.nanoTime();
          s.search(tenant, q);
          (s == a ? ta : tb).add((System.nanoTime() - start) / 1e6);
        }
      }
      for (List<Double> l : List.of(ta, tb)) {
        Percentiles p = Percentiles.of(l.stream().mapToDouble(Double::doubleValue).toArray());
        System.out.printf(Locale.ROOT, "%s %s round %d: p50 %.1f ms, p95 %.1f ms, mean %.1f ms (load %s)%n",
            l == ta ? "A" : "B", cold ? "query embedded" : "repeated query", r + 1, p.p50(), p.p95(),
            p.mean(), loadAverage());
      }
    }
    System.exit(0);
  }

  /** Read here, not through LatencyBench: the parent class path has no Quarry classes for it. */
  private static String loadAverage() {
    try {
      return java.nio.file.Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
    } catch (java.io.IOException e) {
      return "?";
    }
  }

  private static Side open(String name, String classes, String database, ClassLoader deps)
      throws Exception {
    List<URL> urls = new ArrayList<>();
    for (String part : classes.split(":")) {
      urls.add(Path.of(part).toUri().toURL());
    }
    // Child-first for Quarry's own classes: they are not on the parent's path (only the
    // dependencies are), so the parent never answers for them.
    ClassLoader loader = new URLClassLoader(name, urls.toArray(URL[]::new), deps);
    Thread.currentThread().setContextClassLoader(loader);
    Class<?> configClass = loader.loadClass("dev.quarry.ops.Config");
    Object config = configClass.getMethod("fromEnv").invoke(null);
    config = configClass.getMethod("withDatabase", String.class).invoke(config, database);
    loader.loadClass("dev.quarry.store.Database").getMethod("migrate", configClass).invoke(null, config);
    Object embedder = loader.loadClass("dev.quarry.search.OnnxEmbedder").getConstructor().newInstance();
    Class<?> embedderClass = loader.loadClass("dev.quarry.search.Embedder");
    Class<?> vertxClass = loader.loadClass("io.vertx.core.Vertx");
    Object vertx = vertxClass.getMethod("vertx").invoke(null);
    Class<?> databaseClass = loader.loadClass("dev.quarry.store.Database");
    Object pool = databaseClass.getMethod("pool", vertxClass, configClass).invoke(null, vertx, config);
    Class<?> poolClass = loader.loadClass("io.vertx.sqlclient.Pool");
    Class<?> serviceClass = loader.loadClass("dev.quarry.search.SearchService");
    Object search = serviceClass.getConstructor(vertxClass, poolClass, embedderClass, configClass)
        .newInstance(vertx, pool, embedder, config);
    Class<?> requestClass = loader.loadClass("dev.quarry.search.SearchRequest");
    Method searchMethod = serviceClass.getMethod("search", UUID.class, requestClass);
    System.out.println(name + ": " + String.join(File.pathSeparator, classes) + " on " + database);
    return new Side(name, loader, search, searchMethod, requestClass);
  }
}
