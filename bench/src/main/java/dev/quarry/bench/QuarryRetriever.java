package dev.quarry.bench;

import dev.quarry.search.RankedChunk;
import dev.quarry.search.SearchMode;
import dev.quarry.search.SearchService;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** Quarry's own ranking in one mode ({@link SearchService#rank}: no context expansion). */
public final class QuarryRetriever implements Retriever {
  private final SearchService search;
  private final QuarryCorpus corpus;
  private final UUID tenant;
  private final SearchMode mode;

  public QuarryRetriever(SearchService search, QuarryCorpus corpus, UUID tenant, SearchMode mode) {
    this.search = search;
    this.corpus = corpus;
    this.tenant = tenant;
    this.mode = mode;
  }

  @Override
  public String name() {
    return switch (mode) {
      case FULL_TEXT -> "Quarry full-text only (BM25)";
      case VECTOR -> "Quarry vector only (HNSW)";
      case HYBRID -> "Quarry hybrid (" + dev.quarry.search.Fusion.DEFAULT + ")";
    };
  }

  @Override
  public List<String> rank(String query, float[] vector, int k) throws Exception {
    List<RankedChunk> ranked = search.rank(tenant, query, mode, k).toCompletionStage().toCompletableFuture().get();
    List<String> ids = new ArrayList<>(ranked.size());
    for (RankedChunk r : ranked) {
      ids.add(corpus.docId(r.chunkId()));
    }
    return ids;
  }
}
