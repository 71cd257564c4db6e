package dev.quarry.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * BENCHMARKS.md: a preamble and one {@code ## } section per benchmark. A run replaces only the
 * sections it measured, so figures from other benchmarks (and other machines' runs) stay.
 */
public final class BenchmarksFile {
  static final String PREAMBLE = """
      # Benchmarks

      Written by `./quarry bench` (`dev.quarry.bench.BenchMain` in `bench/`); each run replaces its
      own section and keeps the others. Every section names the machine, the date and the command.
      """;

  private BenchmarksFile() {}

  public static void replaceSection(Path file, String title, String body) throws IOException {
    String old = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : PREAMBLE;
    Files.writeString(file, replace(old, title, body), StandardCharsets.UTF_8);
  }

  /** {@code text} with the section headed {@code ## title} replaced by (or appended as) the new one. */
  static String replace(String text, String title, String body) {
    String heading = "## " + title;
    List<String> lines = new ArrayList<>(List.of(text.split("\n", -1)));
    int start = -1;
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).strip().equals(heading)) {
        start = i;
        break;
      }
    }
    String section = heading + "\n\n" + body.strip() + "\n";
    if (start < 0) {
      return text.stripTrailing() + "\n\n" + section;
    }
    int end = start + 1;
    while (end < lines.size() && !lines.get(end).startsWith("## ")) {
      end++;
    }
    String before = String.join("\n", lines.subList(0, start));
    String after = String.join("\n", lines.subList(end, lines.size()));
    return before + (before.isEmpty() ? "" : "\n") + section + (after.isBlank() ? "" : "\n" + after.stripTrailing() + "\n");
  }
}
