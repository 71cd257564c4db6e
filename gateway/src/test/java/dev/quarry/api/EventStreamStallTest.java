package dev.quarry.api;

import static dev.quarry.ingest.IngestFixture.newTenant;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.agent.AnalysisEvent;
import dev.quarry.agent.AnalysisStore;
import dev.quarry.agent.LiveAnalysis;
import dev.quarry.agent.LiveAnalysisProbe;
import dev.quarry.support.Await;
import dev.quarry.support.TestStack;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * A live analysis stream (as {@code GET /v1/analyses/{id}/events} and the POST's stream serve it)
 * with one client that reads and one that stops reading, over real sockets.
 */
@DisplayName("A live event stream whose client stops reading (real sockets, real PostgreSQL)")
class EventStreamStallTest {
  @AutoClose
  private static final TestStack stack = TestStack.start();
  private static final Vertx vertx = stack.vertx();
  private static String request(String path) {
    return "GET " + path + " HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n";
  }

  @Test
  @DisplayName("the stalled client is cut once nothing drained for the stall limit, the reader gets every event, the analysis is not told the client went")
  void stalledClientIsCut() throws Exception {
    LiveAnalysis live = LiveAnalysisProbe.start(new AnalysisStore(stack.pool()), newTenant(stack.db()));
    AtomicInteger following = new AtomicInteger();
    AtomicInteger gone = new AtomicInteger();
    HttpServer server = vertx.createHttpServer().requestHandler(req -> {
      HttpServerResponse response = req.response();
      EventStream.open(response, vertx, Duration.ofMinutes(1));
      // A short stall limit so the test takes seconds; no byte ceiling in reach.
      EventStream.follow(req, vertx, live, 0, e -> response.write(e.sse()), gone::incrementAndGet,
          Duration.ofSeconds(3), Long.MAX_VALUE);
      following.incrementAndGet();
    }).listen(0, "127.0.0.1").await();
    try (Socket stalled = new Socket(); Socket reader = new Socket()) {
      stalled.setReceiveBufferSize(4096); // the gateway's side fills first
      stalled.connect(new InetSocketAddress("127.0.0.1", server.actualPort()));
      stalled.getOutputStream().write(request("/stalled").getBytes(StandardCharsets.US_ASCII));
      reader.connect(new InetSocketAddress("127.0.0.1", server.actualPort()));
      reader.getOutputStream().write(request("/reader").getBytes(StandardCharsets.US_ASCII));
      CompletableFuture<String> read = CompletableFuture.supplyAsync(() -> readUntil(reader, "event: answer"));
      Await.until(() -> following.get() == 2, Duration.ofSeconds(10), "both clients following");

      String text = "x".repeat(60_000);
      int events = 200; // about 12 MB: far more than a connection's write queue holds
      for (int i = 0; i < events; i++) {
        LiveAnalysisProbe.emit(live, AnalysisEvent.OUTPUT, new JsonObject().put("text", text));
      }
      // Nothing more is written: the cut comes from the stall limit alone, not from a later event.
      // The stalled client reads nothing until the gateway has closed its connection.
      Await.until(() -> LiveAnalysisProbe.listeners(live) == 1, Duration.ofSeconds(30),
          "the gateway to drop the stalled client");
      // The analysis ends: the reader gets the terminal event, the cut client does not.
      LiveAnalysisProbe.emit(live, AnalysisEvent.ANSWER, new JsonObject().put("answer", "done"));
      String stalledText = drain(stalled);
      // What the kernels had already taken still arrives; then the stream ends, short of its end.
      assertThat(stalledText).startsWith("HTTP/1.1 200").doesNotContain("event: answer");
      String all = read.get(60, TimeUnit.SECONDS);
      assertThat(all.split("event: output", -1)).hasSize(events + 1);
      assertThat(all).contains("event: answer");
      assertThat(gone.get()).as("a cut is not the client going away (the analysis goes on)").isZero();
    } finally {
      server.close().await();
    }
  }

  /** What a closed connection still delivers, to its end (or its reset, which is a cut too). */
  private static String drain(Socket socket) throws IOException {
    socket.setSoTimeout(30_000);
    InputStream in = socket.getInputStream();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[65536];
    try {
      for (int n; (n = in.read(buf)) >= 0; ) {
        out.write(buf, 0, n);
      }
    } catch (SocketTimeoutException e) {
      throw new AssertionError("the stalled client's connection was closed but its stream did not end", e);
    } catch (IOException reset) {
      // A reset is how the cut may arrive.
    }
    return out.toString(StandardCharsets.UTF_8);
  }

  private static String readUntil(Socket socket, String marker) {
    try {
      socket.setSoTimeout(120_000);
      InputStream in = socket.getInputStream();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      byte[] buf = new byte[65536];
      String tail = "";
      for (int n; (n = in.read(buf)) >= 0; ) {
        out.write(buf, 0, n);
        String seen = tail + new String(buf, 0, n, StandardCharsets.ISO_8859_1);
        if (seen.contains(marker)) {
          break;
        }
        tail = seen.substring(Math.max(0, seen.length() - marker.length()));
      }
      return out.toString(StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
