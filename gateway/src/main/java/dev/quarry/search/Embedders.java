package dev.quarry.search;

import dev.quarry.config.Config;
import dev.quarry.config.InvalidSetting;

/** Picks the embedder that the configuration names (QUARRY_EMBEDDING_PROVIDER). */
public final class Embedders {
  private Embedders() {}

  /** Blocking for {@code openai}: one request learns the model's dimensions. */
  public static Embedder fromConfig(Config config) {
    return switch (config.embeddingProvider()) {
      case "onnx" -> {
        try {
          yield new OnnxEmbedder(config.embeddingModel());
        } catch (IllegalArgumentException unknown) {
          throw new InvalidSetting("QUARRY_EMBEDDING_MODEL=" + config.embeddingModel()
              + ": " + unknown.getMessage());
        }
      }
      case "openai" -> OpenAiEmbedder.probing(config.embeddingBaseUrl(), config.embeddingApiKey(),
          config.embeddingModel());
      default -> throw new InvalidSetting(
          "QUARRY_EMBEDDING_PROVIDER=" + config.embeddingProvider() + " must be onnx or openai");
    };
  }
}
