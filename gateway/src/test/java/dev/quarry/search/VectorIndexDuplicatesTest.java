package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * Red team, round 4: a tenant's identical chunks (one boilerplate paragraph in many documents, so
 * one vector many times) must not hide its other chunks from the in-memory vector copy. With 500
 * copies of one vector beside 2,000 distinct ones, Lucene's HNSW graph of one node per chunk found
 * 1,723 of the 2,000 queried with their own vectors (with 2,000 copies, 1,028); the database finds
 * them all.
 */
@DisplayName("Vector copy: identical vectors do not hide the other chunks")
class VectorIndexDuplicatesTest {
  static final int DIMENSIONS = 384;

  static float[] random(Random r) {
    float[] v = new float[DIMENSIONS];
    for (int i = 0; i < v.length; i++) {
      v[i] = (float) r.nextGaussian();
    }
    return v;
  }

  record Row(UUID id, UUID document, float[] vector) {}

  @Test
  @DisplayName("each distinct chunk is found first with its own vector; every copy comes back, scoped too")
  void duplicates() {
    Random r = new Random(4);
    float[] boilerplate = random(r);
    List<UUID> boilerDocuments = new ArrayList<>();
    List<Row> rows = new ArrayList<>();
    for (int i = 0; i < 500; i++) {
      UUID document = UUID.randomUUID();
      boilerDocuments.add(document);
      rows.add(new Row(UUID.randomUUID(), document, boilerplate.clone()));
    }
    List<Row> distinct = new ArrayList<>();
    for (int i = 0; i < 2_000; i++) {
      Row row = new Row(UUID.randomUUID(), boilerDocuments.get(i % 500), random(r));
      distinct.add(row);
      rows.add(row);
    }
    rows.sort((a, b) -> a.id().compareTo(b.id())); // as the copy reads them: ORDER BY id
    VectorIndex.Builder builder = new VectorIndex.Builder(1, DIMENSIONS);
    for (Row row : rows) {
      builder.chunk(row.id(), row.document(), row.vector());
    }
    VectorIndex index = builder.build();
    assertThat(index.chunks()).isEqualTo(2_500);

    int first = 0;
    for (Row row : distinct) {
      List<RankedChunk> hits = index.nearest(row.vector(), 100, null);
      if (!hits.isEmpty() && hits.get(0).chunkId().equals(row.id())) {
        first++;
        assertThat(hits.get(0).score()).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-5));
        assertThat(hits.get(0).documentId()).isEqualTo(row.document());
      }
    }
    assertThat(first).as("distinct chunks found first with their own vectors").isEqualTo(2_000);

    List<RankedChunk> copies = index.nearest(boilerplate, 600, null);
    Set<UUID> ids = new HashSet<>();
    for (int i = 0; i < 500; i++) {
      assertThat(copies.get(i).score()).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-5));
      ids.add(copies.get(i).chunkId());
    }
    assertThat(ids).as("the 500 copies, each once").hasSize(500);
    assertThat(copies).hasSize(600);
    assertThat(index.nearest(boilerplate, 10, null)).hasSize(10);

    UUID[] scope = {boilerDocuments.get(7), boilerDocuments.get(7), UUID.randomUUID()};
    List<RankedChunk> scoped = index.nearest(boilerplate, 100, scope);
    // document 7 holds one copy and four distinct chunks (i % 500 == 7)
    assertThat(scoped).hasSize(5).allSatisfy(c -> assertThat(c.documentId()).isEqualTo(scope[0]));
    assertThat(scoped.get(0).score()).isCloseTo(1.0, org.assertj.core.data.Offset.offset(1e-5));
  }
}
