package dev.quarry.bench;

import dev.quarry.search.Embedder;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * Embeds a collection once and keeps the vectors in a file, so every system under test ranks with
 * the very same vectors and a rerun skips the slow part. The file is keyed by the model and a hash of
 * every text, so a changed corpus or model is re-embedded rather than silently reused.
 */
public final class VectorCache {
  private static final int BATCH = 32;

  /** The vectors of one collection: {@code docs.get(i)} is the i-th document's. */
  public record Vectors(List<float[]> docs, List<float[]> queries, boolean fromCache, double embedSeconds) {}

  private VectorCache() {}

  public static Vectors load(Path dir, TestCollection c, Embedder embedder) {
    List<String> docTexts = c.docs().stream().map(TestCollection.Doc::text).toList();
    List<String> queryTexts = c.queries().stream().map(TestCollection.Query::text).toList();
    String key = embedder.modelName() + "|" + hash(docTexts, queryTexts);
    Path file = dir.resolve(c.name() + "-" + embedder.modelName() + ".vec");
    if (Files.exists(file)) {
      Vectors cached = read(file, key, docTexts.size(), queryTexts.size());
      if (cached != null) {
        return cached;
      }
    }
    long start = System.nanoTime();
    List<float[]> docs = new ArrayList<>(docTexts.size());
    for (int i = 0; i < docTexts.size(); i += BATCH) {
      docs.addAll(embedder.embedPassages(docTexts.subList(i, Math.min(docTexts.size(), i + BATCH))));
      if ((i / BATCH) % 40 == 0) {
        System.out.printf("  embedding %s: %d/%d documents%n", c.name(), i, docTexts.size());
      }
    }
    List<float[]> queries = new ArrayList<>(queryTexts.size());
    for (String q : queryTexts) {
      queries.add(embedder.embedQuery(q));
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    write(dir, file, key, docs, queries);
    return new Vectors(docs, queries, false, seconds);
  }

  private static Vectors read(Path file, String key, int docCount, int queryCount) {
    try (DataInputStream in = new DataInputStream(new BufferedInputStream(Files.newInputStream(file)))) {
      if (!in.readUTF().equals(key) || in.readInt() != docCount || in.readInt() != queryCount) {
        return null;
      }
      int dims = in.readInt();
      List<float[]> docs = readVectors(in, docCount, dims);
      List<float[]> queries = readVectors(in, queryCount, dims);
      return new Vectors(docs, queries, true, 0);
    } catch (IOException e) {
      return null; // a truncated or foreign file: embed again
    }
  }

  private static List<float[]> readVectors(DataInputStream in, int n, int dims) throws IOException {
    List<float[]> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      float[] v = new float[dims];
      for (int j = 0; j < dims; j++) {
        v[j] = in.readFloat();
      }
      out.add(v);
    }
    return out;
  }

  private static void write(Path dir, Path file, String key, List<float[]> docs, List<float[]> queries) {
    try {
      Files.createDirectories(dir);
      Path tmp = Files.createTempFile(dir, "vectors", ".tmp");
      try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(Files.newOutputStream(tmp)))) {
        out.writeUTF(key);
        out.writeInt(docs.size());
        out.writeInt(queries.size());
        out.writeInt(docs.get(0).length);
        for (List<float[]> list : List.of(docs, queries)) {
          for (float[] v : list) {
            for (float f : v) {
              out.writeFloat(f);
            }
          }
        }
      }
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the vector cache " + file, e);
    }
  }

  private static String hash(List<String> docs, List<String> queries) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      for (List<String> list : List.of(docs, queries)) {
        for (String s : list) {
          sha.update(s.getBytes(StandardCharsets.UTF_8));
          sha.update((byte) 0);
        }
        sha.update((byte) 1);
      }
      return HexFormat.of().formatHex(sha.digest());
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
