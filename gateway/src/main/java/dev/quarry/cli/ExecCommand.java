package dev.quarry.cli;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

@Command(name = "exec", mixinStandardHelpOptions = true,
    description = "Run a Python program in a fresh sandbox over the knowledge base; its output streams as it"
        + " comes. Exits 1 when the program failed.")
final class ExecCommand implements Callable<Integer> {
  @Mixin ClientOptions options;
  @Spec CommandSpec spec;

  @Parameters(index = "0", paramLabel = "FILE.py", description = "The program (the language of docs/CONTRACT.md).")
  Path file;

  @Option(names = "--document", paramLabel = "ID", description = "Let it see only this document (repeatable).")
  List<String> documentIds;

  @Option(names = "--wall-time-ms", paramLabel = "MS", description = "Wall-clock limit (default: the gateway's).")
  Long wallTimeMs;

  @Option(names = "--max-output-chars", paramLabel = "N", description = "Output kept (default: the gateway's).")
  Long maxOutputChars;

  @Option(names = "--json", description = "Print only the final tool result as JSON.")
  boolean json;

  @Override
  public Integer call() {
    String code;
    try {
      code = Files.readString(file, StandardCharsets.UTF_8);
    } catch (NoSuchFileException e) {
      throw new CliFailure("no such file: " + file);
    } catch (IOException e) {
      throw new CliFailure("cannot read " + file + ": " + e.getMessage());
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("code", code);
    if (documentIds != null) {
      body.put("document_ids", documentIds);
    }
    Map<String, Object> limits = new LinkedHashMap<>();
    if (wallTimeMs != null) {
      limits.put("wall_time_ms", wallTimeMs);
    }
    if (maxOutputChars != null) {
      limits.put("max_output_chars", maxOutputChars);
    }
    if (!limits.isEmpty()) {
      body.put("limits", limits);
    }
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    AtomicReference<JsonNode> result = new AtomicReference<>();
    options.client().postEventStream("/v1/executions", body, (event, data) -> {
      if (event.equals("output") && !json) {
        PrintWriter to = "stderr".equals(data.path("stream").asText()) ? err : out;
        to.print(data.path("text").asText());
        to.flush();
      } else if (event.equals("result")) {
        result.set(data);
      }
    });
    JsonNode r = result.get();
    if (r == null) {
      throw new CliFailure("the gateway ended the stream without a result");
    }
    if (json) {
      out.println(r.toString());
      out.flush();
    }
    if (!json && !r.path("stdout").asText().isEmpty() && !r.path("stdout").asText().endsWith("\n")) {
      // The REPL value has no newline of its own; the shell prompt should not follow it on its line.
      out.println();
      out.flush();
    }
    if (r.path("success").asBoolean(false)) {
      return 0;
    }
    JsonNode error = r.path("error");
    if (!json && error.isObject()) {
      String traceback = error.path("traceback").asText("");
      // A traceback ends with the "Type: message" line already.
      err.println(!traceback.isEmpty() ? traceback.stripTrailing()
          : error.path("type").asText() + ": " + error.path("message").asText());
      err.flush();
    }
    return 1;
  }
}
