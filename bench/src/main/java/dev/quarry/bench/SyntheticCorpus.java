package dev.quarry.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.SplittableRandom;

/**
 * A large corpus made from real ones without running the model on it: each chunk takes the words
 * of a real Vaswani abstract, mixed with a fragment of another real abstract (Vaswani or Cranfield),
 * and that abstract's real vector plus small Gaussian noise, normalised. Text and vector stay
 * related (so both retrievers see realistic postings and neighbourhoods) while every chunk differs.
 *
 * <p>{@link #chunks} makes them one at a time, so a million chunks need not be held in memory at
 * once; {@link #generate} collects the same chunks.
 */
public record SyntheticCorpus(List<String> ids, List<String> texts, List<float[]> vectors) {
  /** Per-dimension noise; for 384 dimensions this keeps cosine similarity to the source near 0.98. */
  static final double NOISE = 0.01;

  /**
   * Bumped whenever {@link #chunks} would make different chunks from the same inputs, so that a
   * database loaded by an older generator is not reused as if it held the same corpus.
   */
  static final int GENERATOR_VERSION = 1;

  /** One synthetic chunk. */
  public record Chunk(String id, String text, float[] vector) {}

  public static SyntheticCorpus generate(int size, List<String> baseTexts, List<float[]> baseVectors,
      List<String> otherTexts, long seed) {
    List<String> ids = new ArrayList<>(size);
    List<String> texts = new ArrayList<>(size);
    List<float[]> vectors = new ArrayList<>(size);
    chunks(size, baseTexts, baseVectors, otherTexts, seed).forEachRemaining(c -> {
      ids.add(c.id());
      texts.add(c.text());
      vectors.add(c.vector());
    });
    return new SyntheticCorpus(ids, texts, vectors);
  }

  /** The chunks of {@link #generate}, in the same order, made as they are asked for. */
  public static Iterator<Chunk> chunks(int size, List<String> baseTexts, List<float[]> baseVectors,
      List<String> otherTexts, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    List<String[]> otherWords = new ArrayList<>(otherTexts.size());
    for (String t : otherTexts) {
      otherWords.add(t.split(" "));
    }
    return new Iterator<>() {
      private int next;

      @Override
      public boolean hasNext() {
        return next < size;
      }

      @Override
      public Chunk next() {
        if (next >= size) {
          throw new NoSuchElementException();
        }
        int base = random.nextInt(baseTexts.size());
        String[] extra = otherWords.get(random.nextInt(otherWords.size()));
        int len = Math.min(extra.length, 8 + random.nextInt(24));
        int from = extra.length == len ? 0 : random.nextInt(extra.length - len);
        String text = baseTexts.get(base) + " " + String.join(" ", Arrays.copyOfRange(extra, from, from + len));
        return new Chunk("s" + next++, text, perturb(baseVectors.get(base), random));
      }
    };
  }

  static float[] perturb(float[] v, SplittableRandom random) {
    float[] out = new float[v.length];
    double norm = 0;
    for (int i = 0; i < v.length; i++) {
      out[i] = (float) (v[i] + gaussian(random) * NOISE);
      norm += out[i] * out[i];
    }
    float inv = (float) (1 / Math.sqrt(norm));
    for (int i = 0; i < v.length; i++) {
      out[i] *= inv;
    }
    return out;
  }

  private static double gaussian(SplittableRandom random) {
    // Box-Muller: SplittableRandom has no nextGaussian of its own before Java 17's RandomGenerator.
    double u = 1 - random.nextDouble();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random.nextDouble());
  }
}
