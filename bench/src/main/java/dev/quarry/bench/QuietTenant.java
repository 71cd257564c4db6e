package dev.quarry.bench;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The quiet tenant of the noisy-neighbour benchmark: for the length of a phase it searches
 * ({@code POST /v1/search}, every 250 ms), ingests a small Markdown file ({@code POST /v1/documents},
 * multipart, every 1.5 s) and runs a cell scoped to one of its documents ({@code POST /v1/executions}:
 * one {@code search} callback and a read of the document's {@code /documents} file, every 1.5 s), each
 * loop waiting for its request before the next. That is about 320 requests a minute, within the
 * default quota of 600. A request that takes longer than {@link #TIMEOUT} counts as failed, with
 * that time as its latency.
 */
final class QuietTenant {
  static final List<String> OPS = List.of("search", "ingest", "cell");
  static final Duration TIMEOUT = Duration.ofSeconds(30);
  private static final Map<String, Long> PERIOD_MS = Map.of("search", 250L, "ingest", 1500L, "cell", 1500L);
  private static final List<String> QUERIES = List.of(
      "When does the first ferry leave?", "harbour dues for cargo vessels", "crew training schedule",
      "fuel consumption per crossing", "timetable changes in winter", "car deck safety drill");

  private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(5)).build();
  private final URI base;
  private final String key;
  private final String scopedDocument;
  private final AtomicInteger sent = new AtomicInteger();

  /** What one or more phases measured: latencies and failures per operation. */
  static final class Phase {
    private final Map<String, List<Double>> millis = new LinkedHashMap<>();
    private final Map<String, List<String>> failures = new LinkedHashMap<>();

    Phase() {
      for (String op : OPS) {
        millis.put(op, Collections.synchronizedList(new ArrayList<>()));
        failures.put(op, Collections.synchronizedList(new ArrayList<>()));
      }
    }

    void add(String op, double ms, String failure) {
      millis.get(op).add(ms);
      if (failure != null) {
        failures.get(op).add(failure);
      }
    }

    void addAll(Phase other) {
      for (String op : OPS) {
        millis.get(op).addAll(other.millis.get(op));
        failures.get(op).addAll(other.failures.get(op));
      }
    }

    double[] millis(String op) {
      return millis.get(op).stream().mapToDouble(Double::doubleValue).toArray();
    }

    List<String> failures(String op) {
      return failures.get(op);
    }

    int requests() {
      return millis.values().stream().mapToInt(List::size).sum();
    }

    int failed() {
      return failures.values().stream().mapToInt(List::size).sum();
    }
  }

  QuietTenant(int port, String key, String scopedDocument) {
    this.base = URI.create("http://127.0.0.1:" + port);
    this.key = key;
    this.scopedDocument = scopedDocument;
  }

  /** Each operation a few times, unmeasured: query vectors cached, search copies built, first sandboxes started. */
  void warmUp() throws InterruptedException {
    Phase ignored = new Phase();
    for (String q : QUERIES) {
      once("search", q, ignored);
    }
    for (int i = 0; i < 3; i++) {
      once("ingest", null, ignored);
      once("cell", null, ignored);
    }
    // The search copies are rebuilt in the background after the ingests: a few more searches let them catch up.
    for (String q : QUERIES) {
      once("search", q, ignored);
    }
  }

  /** The three loops side by side for {@code length}; requests under way at its end are waited for. */
  Phase run(Duration length) throws InterruptedException {
    Phase phase = new Phase();
    long end = System.nanoTime() + length.toNanos();
    List<Thread> loops = new ArrayList<>();
    for (String op : OPS) {
      loops.add(Thread.ofVirtual().name("quiet-" + op).start(() -> loop(op, end, phase)));
    }
    for (Thread t : loops) {
      t.join();
    }
    return phase;
  }

  private void loop(String op, long end, Phase phase) {
    long period = PERIOD_MS.get(op) * 1_000_000L;
    long next = System.nanoTime();
    int i = 0;
    while (System.nanoTime() < end) {
      try {
        once(op, QUERIES.get(i++ % QUERIES.size()), phase);
        next += period;
        long wait = next - System.nanoTime();
        if (wait > 0) {
          Thread.sleep(Duration.ofNanos(wait));
        } else {
          next = System.nanoTime();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private void once(String op, String query, Phase phase) throws InterruptedException {
    HttpRequest request = switch (op) {
      case "search" -> json("/v1/search", new JsonObject().put("query", query).put("limit", 10));
      case "ingest" -> upload();
      default -> json("/v1/executions", new JsonObject().put("code", """
          from pathlib import Path
          hits = await search('first ferry timetable', limit=3)
          text = Path('/documents/%s/content.txt').read_text()
          print(len(hits), len(text))""".formatted(scopedDocument))
          .put("document_ids", new JsonArray().add(scopedDocument)));
    };
    long start = System.nanoTime();
    String failure;
    try {
      HttpResponse<String> r = http.send(request, HttpResponse.BodyHandlers.ofString());
      failure = check(op, r);
    } catch (java.net.http.HttpTimeoutException e) {
      failure = "timed out after " + TIMEOUT.toSeconds() + " s";
    } catch (java.io.IOException e) {
      failure = e.getClass().getSimpleName() + ": " + e.getMessage();
    }
    phase.add(op, (System.nanoTime() - start) / 1e6, failure == null ? null : op + ": " + failure);
  }

  private static String check(String op, HttpResponse<String> r) {
    int expected = op.equals("ingest") ? 201 : 200;
    if (r.statusCode() != expected) {
      return r.statusCode() + " " + cut(r.body());
    }
    if (op.equals("cell")) {
      JsonObject result = new JsonObject(r.body());
      if (!result.getBoolean("success", false)) {
        return "success false: " + cut(String.valueOf(result.getValue("error")));
      }
    }
    return null;
  }

  private static String cut(String s) {
    String one = s == null ? "" : s.replaceAll("\\s+", " ");
    return one.length() > 160 ? one.substring(0, 160) + "…" : one;
  }

  private HttpRequest json(String path, JsonObject body) {
    return HttpRequest.newBuilder(base.resolve(path)).timeout(TIMEOUT).header("Authorization", "Bearer " + key)
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.encode())).build();
  }

  /** A small Markdown file (about 1.5 KB), new bytes every time, under one of three names (so it replaces one). */
  private HttpRequest upload() {
    int n = sent.incrementAndGet();
    String content = "# Quay notes " + n + "\n\n## Berths\n\nBerth " + (n % 9 + 1) + " takes vessels up to "
        + (120 + n % 40) + " metres; the pilot boards two miles out.\n\n## Weather\n\n"
        + "Crossings stop when the wind passes force eight; the harbour master decides by six in the morning.\n".repeat(12);
    String boundary = "quiet" + n;
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    body.writeBytes(("--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"quay-notes-"
        + (n % 3) + ".md\"\r\nContent-Type: text/markdown\r\n\r\n").getBytes(StandardCharsets.UTF_8));
    body.writeBytes(content.getBytes(StandardCharsets.UTF_8));
    body.writeBytes(("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
    return HttpRequest.newBuilder(base.resolve("/v1/documents")).timeout(TIMEOUT)
        .header("Authorization", "Bearer " + key).header("Content-Type", "multipart/form-data; boundary=" + boundary)
        .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray())).build();
  }
}
