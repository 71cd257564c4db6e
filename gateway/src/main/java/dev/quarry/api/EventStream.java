package dev.quarry.api;

import dev.quarry.agent.AnalysisEvent;
import dev.quarry.agent.LiveAnalysis;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.RoutingContext;

/** What the API's streaming answers (analyses, executions, ingests) share: server-sent events. */
final class EventStream {
  private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(EventStream.class);
  static final String CONTENT_TYPE = "text/event-stream; charset=utf-8";

  private EventStream() {}

  /**
   * Whether the request's {@code Accept} headers ask for server-sent events: a media range
   * {@code text/event-stream} (exactly; wildcards do not ask for a stream) with a q-value above 0
   * (RFC 9110: {@code q=0} means not acceptable). A malformed q-value counts as 0.
   */
  static boolean accepted(RoutingContext ctx) {
    for (String accept : ctx.request().headers().getAll(HttpHeaders.ACCEPT)) {
      for (String range : accept.split(",")) {
        String[] parts = range.split(";");
        if (!parts[0].strip().equalsIgnoreCase("text/event-stream")) {
          continue;
        }
        if (quality(parts) > 0) {
          return true;
        }
      }
    }
    return false;
  }

  /** The q parameter of a media range (1 when absent, 0 when malformed or out of [0, 1]). */
  static double quality(String[] rangeAndParameters) {
    for (int i = 1; i < rangeAndParameters.length; i++) {
      String[] kv = rangeAndParameters[i].split("=", 2);
      if (kv.length == 2 && kv[0].strip().equalsIgnoreCase("q")) {
        String v = kv[1].strip();
        // RFC 9110 qvalue: 0[.ddd] or 1[.000]
        if (!v.matches("0(\\.[0-9]{0,3})?|1(\\.0{0,3})?")) {
          return 0;
        }
        return Double.parseDouble(v);
      }
    }
    return 1;
  }

  /** What a stream writes when it has had nothing to say for a heartbeat: an SSE comment, which clients skip. */
  static final String HEARTBEAT = ": keep-alive\n\n";

  /**
   * Makes {@code response} an event stream (status 200, chunked, not cached; nothing is written yet)
   * that writes {@link #HEARTBEAT} every {@code heartbeat} until it ends or its client goes, so that
   * proxies and load balancers that cut idle connections (often at 60 s) do not cut a stream whose
   * model call or cell is quiet for minutes. A heartbeat is skipped while the client is not reading
   * (its write queue is full): it would only add to what is waiting.
   */
  static HttpServerResponse open(HttpServerResponse response, Vertx vertx, java.time.Duration heartbeat) {
    response.setStatusCode(200).setChunked(true)
        .putHeader(HttpHeaders.CONTENT_TYPE, CONTENT_TYPE)
        .putHeader(HttpHeaders.CACHE_CONTROL, "no-cache")
        .putHeader("X-Accel-Buffering", "no");
    vertx.setPeriodic(heartbeat.toMillis(), heartbeat.toMillis(), timer -> {
      if (response.ended() || response.closed()) {
        vertx.cancelTimer(timer);
      } else if (!response.writeQueueFull()) {
        response.write(HEARTBEAT);
      }
    });
    return response;
  }

  /**
   * Puts a running analysis' events after {@code afterSeq} (0: from the first) on an open stream:
   * each event goes to {@code write} until the stream has ended, and the terminal one ends it
   * ({@code write} writes its own last words; the response is ended here if it did not). A client
   * that goes away first stops the listening and runs {@code gone}.
   *
   * <p>A client that stops reading is cut: once the connection's write queue is full and has not
   * drained for {@link SlowClient#STALL_LIMIT}, or {@link SlowClient#MAX_WAITING_BYTES} more have been written behind it.
   * Without that, every stalled follower (any number of them, on any running analysis of the tenant)
   * would hold up to all of an analysis' events in the gateway's memory. A cut closes the connection
   * without the terminal event and does not run {@code gone} (the analysis goes on); the client
   * can come back for the rest with {@code Last-Event-ID}.
   */
  static void follow(HttpServerRequest request, Vertx vertx, LiveAnalysis live, long afterSeq,
      Consumer<AnalysisEvent> write, Runnable gone) {
    follow(request, vertx, live, afterSeq, write, gone, () -> { });
  }

  /** As above; {@code stopped} runs once, whichever way the following stops (ended, gone, cut). */
  static void follow(HttpServerRequest request, Vertx vertx, LiveAnalysis live, long afterSeq,
      Consumer<AnalysisEvent> write, Runnable gone, Runnable stopped) {
    follow(request, vertx, live, afterSeq, write, gone, SlowClient.STALL_LIMIT, SlowClient.MAX_WAITING_BYTES, stopped);
  }

  static void follow(HttpServerRequest request, Vertx vertx, LiveAnalysis live, long afterSeq,
      Consumer<AnalysisEvent> write, Runnable gone, java.time.Duration stallLimit, long maxWaitingBytes) {
    follow(request, vertx, live, afterSeq, write, gone, stallLimit, maxWaitingBytes, () -> { });
  }

  static void follow(HttpServerRequest request, Vertx vertx, LiveAnalysis live, long afterSeq,
      Consumer<AnalysisEvent> write, Runnable gone, java.time.Duration stallLimit, long maxWaitingBytes,
      Runnable stopped) {
    HttpServerResponse response = request.response();
    AtomicBoolean ended = new AtomicBoolean();
    AtomicBoolean told = new AtomicBoolean();
    Runnable stop0 = () -> {
      if (told.compareAndSet(false, true)) {
        stopped.run();
      }
    };
    Runnable[] stop = new Runnable[1];
    SlowClient[] slow = new SlowClient[1];
    Runnable cut = () -> {
      if (ended.compareAndSet(false, true)) {
        LOG.info("analysis {}: a stream whose client stopped reading was cut ({} bytes behind a full queue)",
            live.id(), slow[0].behind());
        if (stop[0] != null) {
          stop[0].run();
        }
        stop0.run();
        HardClose.close(request.connection());
      }
    };
    slow[0] = SlowClient.watch(response, vertx, stallLimit, cut);
    response.drainHandler(v -> slow[0].drained());
    response.closeHandler(v -> {
      slow[0].stop();
      if (ended.compareAndSet(false, true)) {
        if (stop[0] != null) {
          stop[0].run();
        }
        gone.run();
      }
      stop0.run();
    });
    stop[0] = live.listen(afterSeq, event -> {
      if (ended.get()) {
        return;
      }
      if (!event.terminal()) {
        write.accept(event);
        if (slow[0].full() && slow[0].behind() > maxWaitingBytes) {
          slow[0].cutNow(cut);
        }
      } else if (ended.compareAndSet(false, true)) {
        slow[0].stop();
        write.accept(event);
        if (!response.ended()) {
          response.end();
        }
        stop0.run();
      }
    });
    if (ended.get()) {
      stop[0].run();
      return;
    }
    // The analysis goes on on another replica (this one drains, or lost its lease): the stream ends
    // without its terminal event, and the client follows it on any replica with Last-Event-ID.
    Runnable unregister = live.onGone(() -> {
      if (ended.compareAndSet(false, true)) {
        slow[0].stop();
        stop[0].run();
        if (!response.ended() && !response.closed()) {
          response.end();
        }
        stop0.run();
      }
    });
    response.endHandler(v -> unregister.run());
  }
}
