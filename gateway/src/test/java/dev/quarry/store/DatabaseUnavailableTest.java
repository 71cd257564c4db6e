package dev.quarry.store;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.channel.ConnectTimeoutException;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.ClosedConnectionException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

class DatabaseUnavailableTest {

  @Test
  @DisplayName("a session the server ended or never let in reads as the database being unreachable")
  void serverEndedSessions() {
    assertThat(DatabaseUnavailable.matches(ClosedConnectionException.INSTANCE)).isTrue();
    assertThat(DatabaseUnavailable.matches(new PgException("terminating connection due to administrator command",
        "FATAL", "57P01", null))).isTrue();
    assertThat(DatabaseUnavailable.matches(new PgException("the database system is starting up", "FATAL", "57P03",
        null))).isTrue();
    assertThat(DatabaseUnavailable.matches(new PgException("connection failure", "FATAL", "08006", null))).isTrue();
    assertThat(DatabaseUnavailable.matches(new CompletionException(ClosedConnectionException.INSTANCE))).isTrue();
    // Netty's, as the reactive client raises them: refused, or no answer to the connect at all.
    assertThat(DatabaseUnavailable.matches(new ConnectTimeoutException("connection timed out: /127.0.0.1:5432")))
        .isTrue();
  }

  @Test
  @DisplayName("statement errors, and refusals by clients other than the database's, are not an outage")
  void otherFailures() {
    assertThat(DatabaseUnavailable.matches(new PgException("duplicate key", "ERROR", "23505", null))).isFalse();
    assertThat(DatabaseUnavailable.matches(new PgException("canceling statement", "ERROR", "57014", null))).isFalse();
    // The JDK's own (the model's HTTP client, say), not the reactive client's.
    assertThat(DatabaseUnavailable.matches(new java.net.ConnectException("Connection refused"))).isFalse();
    assertThat(DatabaseUnavailable.matches(new IllegalStateException("x"))).isFalse();
  }
}
