package dev.quarry.store;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.pubsub.PgChannel;
import io.vertx.pgclient.pubsub.PgSubscriber;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.Tuple;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL's LISTEN/NOTIFY for the replicas of one database: one connection of its own per
 * gateway (Vert.x's {@link PgSubscriber}), reconnected whenever it drops, on which any part listens
 * to a channel. A notification is sent with {@link #publish} inside the transaction whose change it
 * announces, so it is delivered exactly when that change is visible (and never for one rolled back).
 *
 * <p>Notifications sent while the connection is down are lost: each listener is told when its
 * channel is (re)subscribed, the first time and after every reconnection, and must then catch up on
 * what it may have missed (drop its caches, look again). Payloads are at most
 * {@value #MAX_PAYLOAD_BYTES} bytes (PostgreSQL's own limit is about 8000).
 */
public final class Notifications {
  private static final Logger log = LoggerFactory.getLogger(Notifications.class);
  public static final int MAX_PAYLOAD_BYTES = 4000;
  private static final String NOTIFY = "SELECT pg_notify($1, $2)";
  /** Between tries to get the listening connection back. */
  private static final long RECONNECT_MS = 1_000;

  private final PgSubscriber subscriber;
  private volatile boolean closed;

  public Notifications(Vertx vertx, PgConnectOptions options) {
    this.subscriber = PgSubscriber.subscriber(vertx, options)
        .reconnectPolicy(retries -> closed ? -1L : RECONNECT_MS);
    subscriber.closeHandler(v -> {
      if (!closed) {
        log.warn("the LISTEN connection to PostgreSQL closed for good; notifications from other replicas"
            + " are no longer received (the polling fallbacks still run)");
      }
    });
  }

  /** Connects the listening connection; channels listened to before or after are subscribed on it. */
  public Future<Void> start() {
    return subscriber.connect();
  }

  /**
   * Calls {@code handler} with each notification's payload on {@code channel} (on an event loop),
   * and {@code subscribed} each time the channel is subscribed: at first and after each reconnection,
   * when notifications may have been missed.
   */
  public void listen(String channel, Consumer<String> handler, Runnable subscribed) {
    PgChannel ch = subscriber.channel(channel);
    ch.subscribeHandler(v -> subscribed.run());
    ch.exceptionHandler(e -> log.warn("notifications on {}: {}", channel, e.toString()));
    ch.handler(payload -> {
      try {
        handler.accept(payload);
      } catch (RuntimeException e) {
        log.warn("handling a notification on {} failed: {}", channel, e.toString());
      }
    });
  }

  /**
   * Sends a notification through {@code client}: within a transaction, it goes out when that
   * commits. Fails for a payload over {@value #MAX_PAYLOAD_BYTES} bytes.
   */
  public static Future<Void> publish(SqlClient client, String channel, String payload) {
    if (payload.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_PAYLOAD_BYTES) {
      return Future.failedFuture(new IllegalArgumentException("a notification payload is at most "
          + MAX_PAYLOAD_BYTES + " bytes"));
    }
    return client.preparedQuery(NOTIFY).execute(Tuple.of(channel, payload)).mapEmpty();
  }

  public Future<Void> close() {
    closed = true;
    return subscriber.close();
  }
}
