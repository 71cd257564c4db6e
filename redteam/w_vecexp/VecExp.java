package dev.quarry.search;

import java.lang.management.ManagementFactory;
import java.util.*;

/** Red-team experiments on VectorIndex outside a gateway: duplicates, memory, build time. */
public class VecExp {
  static float[] rnd(Random r, int d) { float[] v = new float[d]; for (int i = 0; i < d; i++) v[i] = (float) r.nextGaussian(); return v; }
  static long used() { for (int i = 0; i < 3; i++) System.gc(); Runtime rt = Runtime.getRuntime(); return rt.totalMemory() - rt.freeMemory(); }

  public static void main(String[] a) throws Exception {
    String what = a[0];
    int d = 384;
    Random r = new Random(1);
    if (what.equals("dup")) {
      int dups = Integer.parseInt(a[1]), distinct = Integer.parseInt(a[2]);
      VectorIndex.Builder b = new VectorIndex.Builder(1, d);
      float[] same = rnd(r, d);
      UUID dupDoc = UUID.randomUUID();
      List<float[]> uniq = new ArrayList<>(); List<UUID> uniqIds = new ArrayList<>(); List<UUID> uniqDocs = new ArrayList<>();
      // interleave: distinct ones first, then the duplicates (ORDER BY id is random order anyway)
      List<Object[]> rows = new ArrayList<>();
      for (int i = 0; i < distinct; i++) { float[] v = rnd(r, d); UUID id = UUID.randomUUID(); UUID doc = UUID.randomUUID(); uniq.add(v); uniqIds.add(id); uniqDocs.add(doc); rows.add(new Object[]{id, doc, v}); }
      for (int i = 0; i < dups; i++) rows.add(new Object[]{UUID.randomUUID(), dupDoc, same.clone()});
      rows.sort(Comparator.comparing(o -> (UUID) o[0]));
      for (Object[] o : rows) b.chunk((UUID) o[0], (UUID) o[1], (float[]) o[2]);
      long t0 = System.nanoTime();
      VectorIndex idx = b.build();
      System.out.printf("built %d chunks in %d ms, bytes %d%n", idx.chunks(), (System.nanoTime() - t0) / 1_000_000, idx.bytes());
      int found = 0, foundTop1 = 0, scopedFound = 0;
      for (int ii = 0; ii < distinct; ii++) { final int i = ii;
        List<RankedChunk> res = idx.nearest(uniq.get(i), 100, null);
        boolean f = res.stream().anyMatch(c -> c.chunkId().equals(uniqIds.get(i)));
        if (f) found++;
        if (!res.isEmpty() && res.get(0).chunkId().equals(uniqIds.get(i))) foundTop1++;
        // scoped to its own document plus the duplicate document
        List<RankedChunk> sc = idx.nearest(uniq.get(i), 100, new UUID[]{uniqDocs.get(i), dupDoc});
        if (sc.stream().anyMatch(c -> c.chunkId().equals(uniqIds.get(i)))) scopedFound++;
      }
      System.out.printf("exact-match query: found in top100 %d/%d, top1 %d/%d, scoped %d/%d%n", found, distinct, foundTop1, distinct, scopedFound, distinct);
    } else if (what.equals("groups")) {
      int groups = Integer.parseInt(a[1]), copies = Integer.parseInt(a[2]);
      VectorIndex.Builder b = new VectorIndex.Builder(1, d);
      List<Object[]> rows = new ArrayList<>(); List<float[]> g = new ArrayList<>();
      for (int i = 0; i < groups; i++) { float[] v = rnd(r, d); g.add(v); UUID doc = UUID.randomUUID(); for (int c = 0; c < copies; c++) rows.add(new Object[]{UUID.randomUUID(), doc, v.clone(), i}); }
      rows.sort(Comparator.comparing(o -> (UUID) o[0]));
      Map<UUID, Integer> groupOf = new HashMap<>();
      for (Object[] o : rows) { b.chunk((UUID) o[0], (UUID) o[1], (float[]) o[2]); groupOf.put((UUID) o[0], (Integer) o[3]); }
      VectorIndex idx = b.build();
      int found = 0;
      for (int i = 0; i < groups; i++) { final int gi = i; if (idx.nearest(g.get(i), 100, null).stream().anyMatch(c -> groupOf.get(c.chunkId()) == gi)) found++; }
      System.out.printf("%d groups x %d identical copies: group found in top100 for %d/%d%n", groups, copies, found, groups);
    } else if (what.equals("clustered")) {
      float[][] centres = new float[60][]; for (int i = 0; i < 60; i++) centres[i] = rnd(r, d);
      VectorIndex.Builder b = new VectorIndex.Builder(1, d);
      List<float[]> all = new ArrayList<>(); List<UUID> ids = new ArrayList<>();
      for (int i = 0; i < 3000; i++) { float[] c = centres[r.nextInt(60)]; float[] v = new float[d]; for (int j = 0; j < d; j++) v[j] = c[j] + (float) (r.nextGaussian() * 0.02 * Math.sqrt(d)); UUID id = new UUID(0, i); all.add(v); ids.add(id); }
      for (int i = 0; i < 3000; i++) b.chunk(ids.get(i), new UUID(1, i / 30), all.get(i));
      VectorIndex idx = b.build();
      int found = 0; long h = 0;
      for (int q = 0; q < 200; q++) {
        float[] qv = rnd(r, d); float[] qu = VectorIndex.normalised(qv);
        Integer[] order = new Integer[3000]; for (int i = 0; i < 3000; i++) order[i] = i;
        double[] sim = new double[3000]; for (int i = 0; i < 3000; i++) { float[] u = VectorIndex.normalised(all.get(i)); double s2 = 0; for (int j = 0; j < d; j++) s2 += u[j] * qu[j]; sim[i] = s2; }
        Arrays.sort(order, (x, y) -> Double.compare(sim[y], sim[x]));
        Set<UUID> exact = new HashSet<>(); for (int i = 0; i < 10; i++) exact.add(ids.get(order[i]));
        List<RankedChunk> res = idx.nearest(qv, 10, null);
        for (RankedChunk c : res) { if (exact.contains(c.chunkId())) found++; h = h * 31 + c.chunkId().getLeastSignificantBits(); }
      }
      System.out.printf("clustered: recall@10 far queries %d/2000, hash %d%n", found, h);
    } else if (what.equals("mem")) {
      int n = Integer.parseInt(a[1]);
      int docs = Math.max(1, n / 30);
      UUID[] docIds = new UUID[docs]; for (int i = 0; i < docs; i++) docIds[i] = UUID.randomUUID();
      long before = used();
      final long[] peak = {0};
      Thread sampler = new Thread(() -> { while (!Thread.currentThread().isInterrupted()) { Runtime rt = Runtime.getRuntime(); peak[0] = Math.max(peak[0], rt.totalMemory() - rt.freeMemory()); try { Thread.sleep(5); } catch (InterruptedException e) { return; } } });
      VectorIndex.Builder b = new VectorIndex.Builder(1, d);
      for (int i = 0; i < n; i++) b.chunk(UUID.randomUUID(), docIds[i % docs], rnd(r, d));
      long afterRows = used();
      sampler.setDaemon(true); sampler.start();
      long t0 = System.nanoTime();
      VectorIndex idx = b.build();
      long ms = (System.nanoTime() - t0) / 1_000_000;
      sampler.interrupt();
      b = null;
      long after = used();
      System.out.printf("n=%d build %d ms; estimate %d, peak-reserved %d, reported bytes %d; retained %d; rows-held %d; sampled peak over base %d (no-GC sampler, upper bound)%n",
          n, ms, VectorIndex.estimateBytes(n, d, docs), VectorIndex.peakBytes(n, d, docs), idx.bytes(), after - before, afterRows - before, peak[0] - before);
      System.out.println(idx.nearest(rnd(r, d), 5, null).size());
    }
  }
}
class VecHisto {
  public static void main(String[] a) throws Exception {
    int n = Integer.parseInt(a[0]); int d = 384; java.util.Random r = new java.util.Random(1);
    int docs = Math.max(1, n / 30);
    java.util.UUID[] docIds = new java.util.UUID[docs]; for (int i = 0; i < docs; i++) docIds[i] = java.util.UUID.randomUUID();
    VectorIndex.Builder b = new VectorIndex.Builder(1, d);
    for (int i = 0; i < n; i++) b.chunk(java.util.UUID.randomUUID(), docIds[i % docs], VecExp.rnd(r, d));
    VectorIndex idx = b.build();
    b = null;
    System.out.println("built; reported " + idx.bytes() + " pid " + ProcessHandle.current().pid());
    Thread.sleep(Long.parseLong(a[1]));
    System.out.println(idx.chunks());
  }
}
