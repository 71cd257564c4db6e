package dev.quarry.agent;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/** The system prompt: docs/CONTRACT.md in Quarry's own words (resource {@code agent/system-prompt.md}). */
public final class SystemPrompt {
  public static final String TEXT = load();

  private SystemPrompt() {}

  private static String load() {
    try (InputStream in = SystemPrompt.class.getResourceAsStream("/agent/system-prompt.md")) {
      if (in == null) {
        throw new IllegalStateException("resource agent/system-prompt.md is missing from the jar");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
