package dev.quarry.support;

import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One client of a Server-Sent Events stream over real HTTP (an analysis' events, as its POST or
 * {@code GET /v1/analyses/{id}/events} sends them), read on a thread of its own: each event as it
 * arrived, with the time it did, for tests and benchmarks that follow streams through replicas.
 * Heartbeats (comments) are skipped. A response that is not a stream (a 4xx) is read whole.
 */
public final class SseClient implements AutoCloseable {
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** One event as received: its message exactly as sent, its parts, and when it arrived (epoch ms). */
  public record Event(long seq, String type, String data, String message, long receivedAtMs) {
    public JsonObject json() {
      return new JsonObject(data);
    }

    /** When the gateway made the event (its {@code at}), in epoch ms. */
    public long atMs() {
      return Instant.parse(json().getString("at")).toEpochMilli();
    }

    /** From the event's making to its arrival here. */
    public long delayMs() {
      return receivedAtMs - atMs();
    }

    public boolean terminal() {
      return "answer".equals(type) || "failed".equals(type);
    }
  }

  private final List<Event> events = new ArrayList<>();
  private final CompletableFuture<HttpResponse<InputStream>> head;
  private final CompletableFuture<Void> done = new CompletableFuture<>();
  private volatile String body = "";
  private volatile InputStream stream;

  private SseClient(HttpRequest request) {
    head = HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofInputStream());
    head.whenComplete((r, e) -> {
      if (e != null) {
        done.completeExceptionally(e);
        return;
      }
      stream = r.body();
      Thread.ofVirtual().name("sse-client").start(() -> read(r));
    });
  }

  /** Follows {@code GET path} on {@code baseUrl}, from after {@code lastEventId} (0: from the first). */
  public static SseClient get(String baseUrl, String path, String key, long lastEventId) {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(Duration.ofMinutes(5))
        .header("Authorization", "Bearer " + key).header("Accept", "text/event-stream").GET();
    if (lastEventId > 0) {
      b.header("Last-Event-ID", Long.toString(lastEventId));
    }
    return new SseClient(b.build());
  }

  /** POSTs {@code json} to {@code path} and follows the stream it answers with. */
  public static SseClient post(String baseUrl, String path, String key, JsonObject json) {
    return new SseClient(HttpRequest.newBuilder(URI.create(baseUrl + path)).timeout(Duration.ofMinutes(5))
        .header("Authorization", "Bearer " + key).header("Content-Type", "application/json")
        .header("Accept", "text/event-stream")
        .POST(HttpRequest.BodyPublishers.ofString(json.encode(), StandardCharsets.UTF_8)).build());
  }

  private void read(HttpResponse<InputStream> r) {
    try (BufferedReader in = new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8))) {
      String type = r.headers().firstValue("Content-Type").orElse("");
      if (!type.startsWith("text/event-stream")) {
        StringBuilder all = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
          all.append(line).append('\n');
        }
        body = all.toString();
        done.complete(null);
        return;
      }
      StringBuilder message = new StringBuilder();
      long seq = -1;
      String event = null;
      String data = null;
      for (String line = in.readLine(); line != null; line = in.readLine()) {
        if (line.isEmpty()) {
          if (data != null) {
            synchronized (events) {
              events.add(new Event(seq, event, data, message.toString() + "\n", System.currentTimeMillis()));
            }
          }
          message.setLength(0);
          seq = -1;
          event = null;
          data = null;
          continue;
        }
        if (line.startsWith(":")) {
          continue; // a heartbeat
        }
        message.append(line).append('\n');
        if (line.startsWith("id: ")) {
          seq = Long.parseLong(line.substring(4));
        } else if (line.startsWith("event: ")) {
          event = line.substring(7);
        } else if (line.startsWith("data: ")) {
          data = line.substring(6);
        }
      }
      done.complete(null);
    } catch (IOException | RuntimeException e) {
      done.completeExceptionally(e);
    }
  }

  /** The response's status, once its head has arrived (within {@code limit}). */
  public int status(Duration limit) throws Exception {
    return head.get(limit.toMillis(), TimeUnit.MILLISECONDS).statusCode();
  }

  /** A header of the response, once its head has arrived. */
  public String header(String name, Duration limit) throws Exception {
    return head.get(limit.toMillis(), TimeUnit.MILLISECONDS).headers().firstValue(name).orElse(null);
  }

  /** The events received so far, in the order they came. */
  public List<Event> events() {
    synchronized (events) {
      return List.copyOf(events);
    }
  }

  /** Completes when the stream has ended (its server ended it, or it failed). */
  public CompletableFuture<Void> done() {
    return done;
  }

  /** The body of a response that was not a stream. */
  public String body() {
    return body;
  }

  /** Hangs up. */
  @Override
  public void close() {
    head.cancel(true);
    InputStream s = stream;
    if (s != null) {
      try {
        s.close();
      } catch (IOException e) {
        // gone already
      }
    }
  }
}
