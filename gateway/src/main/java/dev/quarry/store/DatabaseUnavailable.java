package dev.quarry.store;

import io.vertx.sqlclient.ClosedConnectionException;
import io.vertx.sqlclient.DatabaseException;

/**
 * PostgreSQL could not be reached, or ended the session (a restart, a failover, a shutdown): a
 * condition of the service, not of the request, which the API answers with a 503 to retry.
 */
public final class DatabaseUnavailable extends RuntimeException {
  public DatabaseUnavailable(Throwable cause) {
    super("the database is unreachable: " + cause.getMessage(), cause, false, false);
  }

  /**
   * Whether a failure of a database call means the database is out of reach: no connection
   * (refused, closed under the statement), or a session ended by the server (SQLSTATE class 08,
   * connection exception, or 57P0x, the server shutting down, crashed or still starting).
   */
  public static boolean matches(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof DatabaseUnavailable || t instanceof ClosedConnectionException) {
        return true;
      }
      // Refused connections of the reactive client come as Netty's; the Docker and model clients
      // raise their own, which must not read as the database's.
      if (t instanceof java.net.ConnectException && t.getClass().getName().startsWith("io.netty.")) {
        return true;
      }
      // What the client says of a connection the server closed between two statements.
      if (t instanceof io.vertx.core.VertxException && t.getMessage() != null
          && t.getMessage().startsWith("Connection is not active")) {
        return true;
      }
      if (t instanceof DatabaseException d && d.getSqlState() != null
          && (d.getSqlState().startsWith("08") || d.getSqlState().startsWith("57P0"))) {
        return true;
      }
    }
    return false;
  }
}
