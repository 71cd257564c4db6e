package dev.quarry.gateway;

import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpConnection;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import dev.quarry.api.ApiError;
import dev.quarry.api.HardClose;
import dev.quarry.api.ProtocolErrors;
import dev.quarry.telemetry.QuarryMetrics;
import io.vertx.core.http.impl.HttpServerConnection;
import io.vertx.core.net.impl.ConnectionBase;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Bounds what a client can hold of a server without sending requests: a connection that has no
 * request under way for {@code idle} (one that never finished a request's head, or a kept-alive one
 * after its last response) is closed, and at {@code max} open connections a new one displaces the
 * oldest quiet one (or, when all are busy, is closed as it comes). Before, nothing ever closed a connection: 19,990 silent or half-sent ones, no key needed,
 * took every file descriptor and every request of every tenant timed out (red team round 5, R5-6).
 *
 * <p>A request under way is never cut here, however long it is quiet: an analysis answered after
 * minutes, an event stream between heartbeats. Its body has a deadline of its own
 * ({@code QUARRY_BODY_TIMEOUT_MS}).
 */
final class ConnectionGuard {
  private static final Logger log = LoggerFactory.getLogger(ConnectionGuard.class);

  /**
   * One connection: the response of its latest request, and since when it has had none under way
   * (nanos; {@link #BUSY} while one is). Routes set their own close and end handlers on responses
   * and connections (Vert.x keeps one of each), so the guard only reads state: a response's
   * {@code ended()} and {@code closed()}, at each sweep.
   */
  private static final class Held {
    volatile HttpServerRequest latest;
    volatile long quietSince;
    /** Refused for breaking HTTP: it is closing, and nothing more it carries is served. */
    volatile boolean refused;

    Held(long now) {
      quietSince = now;
    }

    /** Whether its latest request is under way: its response neither ended nor closed. */
    boolean underWay() {
      HttpServerRequest r = latest;
      return r != null && !r.response().ended() && !r.response().closed();
    }
  }

  private static final long BUSY = Long.MAX_VALUE;

  private final long idleNanos;
  private final int max;
  private final QuarryMetrics metrics;
  private final AtomicInteger protocolErrors = new AtomicInteger();
  /** The server's request handler, which {@link #connected} sets on each connection. */
  private volatile Handler<HttpServerRequest> requests;
  private final Map<HttpConnection, Held> open = new ConcurrentHashMap<>();
  private final AtomicInteger refused = new AtomicInteger();
  private final AtomicInteger evicted = new AtomicInteger();
  /** The open connections, oldest first (guarded by itself). */
  private final java.util.LinkedHashSet<HttpConnection> arrivals = new java.util.LinkedHashSet<>();

  ConnectionGuard(Duration idle, int max, QuarryMetrics metrics) {
    this.idleNanos = idle.toNanos();
    this.max = max;
    this.metrics = metrics;
  }

  /**
   * The server's connection handler: counts the connection in. At the cap it first makes room by
   * closing the longest-open connection that has no request under way (a silent one, or a kept-alive
   * one between requests); only when none of the {@value #EVICTION_SCAN} oldest is quiet is the new
   * connection closed instead. So silent connections, which cost nothing to open and need no key,
   * cannot keep everyone else out: each new one displaces the oldest silent one (red team R6-1),
   * while a client's connection, open a moment before it sends its request, is the youngest.
   */
  void connected(HttpConnection connection) {
    if (open.size() >= max && !evictQuiet()) {
      int n = refused.incrementAndGet();
      if (n == 1 || n % 1000 == 0) {
        log.warn("{} open connections, the most QUARRY_MAX_CONNECTIONS allows, each with a request under way:"
            + " closing new ones ({} so far)", open.size(), n);
      }
      HardClose.close(connection);
      return;
    }
    open.put(connection, new Held(System.nanoTime()));
    synchronized (arrivals) {
      arrivals.add(connection);
    }
    // Vert.x wraps the server's request handler in one that answers a request of an HTTP version it
    // does not know with a bare 501, before any handler of ours sees it; Quarry serves no WebSockets
    // (that wrapper's other job), so each connection gets the guarded handler itself, which answers 505.
    if (connection instanceof HttpServerConnection server && requests != null) {
      server.handler(requests);
    }
    // Per connection: its failures (a chunked body the decoder cannot read, a reset) come here first,
    // and without a handler Vert.x logs each at ERROR.
    connection.exceptionHandler(e -> failed(connection, e));
    // Counted out when it closes, whoever closes it. Not through closeHandler: Vert.x keeps one, and
    // an upload sets its own on the request's connection.
    if (connection instanceof ConnectionBase base) {
      base.closeFuture().onComplete(v -> forget(connection));
    }
  }

  private void forget(HttpConnection connection) {
    open.remove(connection);
    synchronized (arrivals) {
      arrivals.remove(connection);
    }
  }

  /** How many of the oldest connections are looked at for a quiet one to close at the cap. */
  static final int EVICTION_SCAN = 256;

  /** Closes the oldest connection without a request under way, among the first {@value #EVICTION_SCAN}. */
  private boolean evictQuiet() {
    HttpConnection victim = null;
    synchronized (arrivals) {
      int looked = 0;
      for (var it = arrivals.iterator(); it.hasNext() && looked < EVICTION_SCAN; looked++) {
        HttpConnection c = it.next();
        Held held = open.get(c);
        if (held == null || !held.underWay()) {
          it.remove();
          victim = c;
          break;
        }
      }
    }
    if (victim == null) {
      return false;
    }
    open.remove(victim);
    int n = evicted.incrementAndGet();
    if (n == 1 || n % 1000 == 0) {
      log.warn("{} open connections, the most QUARRY_MAX_CONNECTIONS allows: closing the oldest quiet ones to"
          + " make room ({} so far)", open.size(), n);
    }
    HardClose.close(victim);
    return true;
  }

  /**
   * {@code handler}, with each request noted as its connection's latest, and a head that breaks
   * HTTP refused before it ({@link ProtocolErrors#ofDecodedHead}). A request pipelined behind one
   * that was refused is not served: the connection is closing, and what follows a request whose
   * framing was in doubt may be the rest of its body.
   */
  Handler<HttpServerRequest> counting(Handler<HttpServerRequest> handler) {
    return request -> {
      Held held = open.get(request.connection());
      if (held != null) {
        if (held.refused) {
          return;
        }
        held.latest = request;
        held.quietSince = BUSY;
      }
      ApiError broken = ProtocolErrors.ofDecodedHead(request);
      if (broken != null) {
        refuse(request, broken, null);
        return;
      }
      handler.handle(request);
    };
  }

  /** The server's handler of a request whose head the decoder could not read. */
  private void invalidHead(HttpServerRequest request) {
    Held held = open.get(request.connection());
    if (held != null) {
      held.latest = request;
      held.quietSince = BUSY;
    }
    refuse(request, ProtocolErrors.ofHead(request.decoderResult().cause()), request.decoderResult().cause());
  }

  /**
   * A failure of a connection: the decoder's, reading a chunked body (Vert.x then closes the
   * connection), is answered here if its request's answer has not begun, since this is the last
   * moment anything can be sent; anything else is the client going away, noted at debug level.
   */
  private void failed(HttpConnection connection, Throwable e) {
    ApiError broken = ProtocolErrors.ofBody(e);
    Held held = open.get(connection);
    HttpServerRequest request = held == null ? null : held.latest;
    if (broken == null) {
      log.debug("connection from {} failed: {}", connection.remoteAddress(), e.toString());
      return;
    }
    if (request != null && !request.response().headWritten()) {
      refuse(request, broken, e);
      return;
    }
    if (held == null || !held.refused) {
      count(broken, e); // the answer had begun (or none was under way): nothing left to tell the client
    }
    // Vert.x closes the channel at once, dropping what was written in this read and not yet
    // flushed: an answer given before the body was read (a 404, a 401) would never leave.
    flush(connection);
  }

  private static void flush(HttpConnection connection) {
    if (connection instanceof ConnectionBase base) {
      base.channel().flush();
    }
  }

  private void refuse(HttpServerRequest request, ApiError error, Throwable cause) {
    Held held = open.get(request.connection());
    if (held != null) {
      held.refused = true;
    }
    count(error, cause);
    ProtocolErrors.reply(request, error);
    flush(request.connection()); // out before the decoder's failure closes the channel, if that is why
  }

  /** Counts a refusal, and logs it: the first, then every thousandth, at INFO (clients' mistakes, not ours). */
  private void count(ApiError error, Throwable cause) {
    metrics.protocolError(error.code());
    int n = protocolErrors.incrementAndGet();
    if (n == 1 || n % 1000 == 0) {
      log.info("refused a request that breaks HTTP ({} {}: {}{}; {} so far)", error.status(), error.code(),
          error.getMessage(), cause == null ? "" : "; " + cause, n);
    } else {
      log.debug("refused a request that breaks HTTP ({} {}: {})", error.status(), error.code(), error.getMessage());
    }
  }

  /**
   * Closes the connections that have had no request under way for longer than the idle limit (as
   * far as the sweeps can tell: one that finished a response is quiet from the first sweep that sees
   * it finished).
   */
  void sweep() {
    long now = System.nanoTime();
    for (Map.Entry<HttpConnection, Held> e : open.entrySet()) {
      Held held = e.getValue();
      if (held.underWay()) {
        held.quietSince = BUSY;
      } else if (held.quietSince == BUSY) {
        held.quietSince = now;
      } else if (now - held.quietSince > idleNanos) {
        forget(e.getKey());
        HardClose.close(e.getKey());
      }
    }
  }

  /**
   * An HTTP/1.1 server that this guard watches, serving {@code handler}; not yet listening. HTTP/1.1
   * only (clients and ingresses speak it; h2c was never used): with h2c on, Vert.x makes a connection
   * only once its first bytes arrive, so a silent one escaped the guard.
   */
  HttpServer server(Vertx vertx, Handler<HttpServerRequest> handler) {
    requests = counting(handler);
    return vertx.createHttpServer(new HttpServerOptions().setHttp2ClearTextEnabled(false))
        .connectionHandler(this::connected)
        .invalidRequestHandler(this::invalidHead)
        .requestHandler(requests);
  }

  /** Sweeps every so often (a fraction of the idle limit); returns the timer. */
  long sweepEvery(Vertx vertx) {
    long period = Math.max(100, Duration.ofNanos(idleNanos).toMillis() / 4);
    return vertx.setPeriodic(period, id -> sweep());
  }
}
