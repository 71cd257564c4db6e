package dev.quarry.support;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Everything logged at WARN and above, by any logger, while it is open: for tests that hold the
 * gateway to "no ERROR, no stack trace" for inputs that are the client's doing.
 */
public final class LogCapture implements AutoCloseable {
  private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
  private final ListAppender<ILoggingEvent> seen = new ListAppender<>();

  public LogCapture() {
    seen.start();
    root.addAppender(seen);
  }

  /** What was logged at ERROR, or with a stack trace at any level, since the last {@link #clear}. */
  public List<String> errorsAndTraces() {
    synchronized (seen) {
      return seen.list.stream()
          .filter(e -> e.getLevel().isGreaterOrEqual(Level.ERROR) || e.getThrowableProxy() != null)
          .map(e -> e.getLevel() + " " + e.getLoggerName() + " " + e.getFormattedMessage()
              + (e.getThrowableProxy() == null ? "" : " [" + e.getThrowableProxy().getClassName() + ": "
                  + e.getThrowableProxy().getMessage() + "]"))
          .toList();
    }
  }

  /** Every message logged at WARN and above since the last {@link #clear}. */
  public List<String> messages() {
    synchronized (seen) {
      return seen.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }
  }

  public void clear() {
    synchronized (seen) {
      seen.list.clear();
    }
  }

  @Override
  public void close() {
    root.detachAppender(seen);
    seen.stop();
  }
}
