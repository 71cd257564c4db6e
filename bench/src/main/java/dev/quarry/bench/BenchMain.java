package dev.quarry.bench;

import dev.quarry.search.OnnxEmbedder;

/** Placeholder entry point; replaced below. */
public final class BenchMain {
  public static void main(String[] args) {
    BenchPaths paths = BenchPaths.detect();
    OnnxEmbedder embedder = new OnnxEmbedder();
    for (TestCollection c : new TestCollection[] {
        TestCollections.cranfield(paths.retrieval()), TestCollections.vaswani(paths.retrieval())}) {
      System.out.printf("%s: %d docs (%d empty skipped), %d queries (%d judged), %d judgments%n", c.name(),
          c.docs().size(), c.skippedEmptyDocs(), c.queries().size(), c.judgedQueries().size(), c.judgmentCount());
      VectorCache.Vectors v = VectorCache.load(paths.work().resolve("embeddings"), c, embedder);
      System.out.printf("  vectors: cached=%s %.1fs%n", v.fromCache(), v.embedSeconds());
    }
  }
}
