package dev.quarry.agent;

/** Tokens one model call (or a whole analysis) used, as the endpoint reported them. */
public record Usage(long promptTokens, long completionTokens) {
  public static final Usage NONE = new Usage(0, 0);

  public long total() {
    return promptTokens + completionTokens;
  }

  public Usage plus(Usage other) {
    return new Usage(promptTokens + other.promptTokens, completionTokens + other.completionTokens);
  }
}
