package dev.quarry.search;

import dev.quarry.ops.Config;

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
          throw new Config.InvalidSetting("QUARRY_EMBEDDING_MODEL=" + config.embeddingModel()
              + ": " + unknown.getMessage());
        }
      }
      case "openai" -> OpenAiEmbedder.probing(config.embeddingBaseUrl(), config.embeddingApiKey(),
          config.embeddingModel());
      default -> throw new Config.InvalidSetting(
          "QUARRY_EMBEDDING_PROVIDER=" + config.embeddingProvider() + " must be onnx or openai");
    };
  }
}
