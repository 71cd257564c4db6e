package dev.quarry.sandbox;

import dev.quarry.proto.sandbox.v1.Cancel;
import dev.quarry.proto.sandbox.v1.CellLimits;
import dev.quarry.proto.sandbox.v1.CellResult;
import dev.quarry.proto.sandbox.v1.ExecuteRequest;
import dev.quarry.proto.sandbox.v1.GatewayMessage;
import dev.quarry.proto.sandbox.v1.OutputChannel;
import dev.quarry.proto.sandbox.v1.SandboxMessage;
import dev.quarry.telemetry.QuarryMetrics;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session over one live sandbox: sends cells, relays output, serves callbacks with the tenant and
 * scope fixed at open, and turns every way a cell can end (result, timeout, cancel, dead container)
 * into exactly one {@link CellOutcome}. State is guarded by {@code this}; nothing here blocks an
 * event loop (Docker calls run on worker threads).
 */
final class GrpcSandboxSession implements SandboxSession {
  private static final Logger LOG = LoggerFactory.getLogger(GrpcSandboxSession.class);
  /** How long past its wall time the runner has to report a cell before the container is killed. */
  static final long KILL_GRACE_MS = 3_000;
  /** How long a Cancel has to take effect before the container is killed. */
  static final long CANCEL_GRACE_MS = 2_000;
  /** How long a dying container gets to exit before its state is read (OOM or crash). */
  private static final Duration EXIT_WAIT = Duration.ofSeconds(5);
  /*
   * What arrives on the runner's stream is untrusted (code that escaped the language can speak as
   * the runner): every size the runner keeps to is applied again here, on what arrives.
   */
  /**
   * Error messages and tracebacks: the runner clips them to this ({@code executor.MAX_ERROR_CHARS})
   * and appends "... [N more characters]"; anything longer is clipped again the same way.
   */
  static final int MAX_ERROR_CHARS = 8_000;
  /** Room for the runner's own "... [N more characters]" after a clipped error field. */
  private static final int CLIP_SUFFIX_ROOM = 40;
  /** An error type is a Python exception's class name. */
  static final int MAX_ERROR_TYPE_CHARS = 100;
  /**
   * A callback's arguments, as JSON: the runner refuses more ({@code executor.MAX_CALLBACK_ARGUMENT_CHARS})
   * and so does the gateway, before parsing them. This is also the bound of an {@code llm()} prompt.
   */
  static final int MAX_CALLBACK_ARGUMENT_CHARS = 1_000_000;
  /** A file read's path: longer than Linux's PATH_MAX it cannot have been opened. */
  static final int MAX_FILE_READ_PATH_CHARS = 4_096;
  /**
   * Callbacks a sandbox may have waiting for their turn before the gateway stops reading its stream
   * (HTTP/2 flow control then holds the runner's sends); reading resumes below half of it.
   */
  static final int MAX_WAITING_CALLBACKS = 64;

  private final Vertx vertx;
  private final ContainerLauncher launcher;
  private final LiveSandbox live;
  private final Scope scope;
  private final Runnable onClosed;
  private final Runnable onRemoved;
  private final QuarryMetrics metrics;
  private final SandboxSettings.Fairness fairness;
  /** How this sandbox's callbacks take their turn and are answered. */
  private final CallbackServing serving;
  private long stallTimer = -1;
  private Cell cell;
  private int cellCount;
  private boolean closed;
  private String deadReason;
  private Future<Void> removal;
  private Future<Void> closing;

  GrpcSandboxSession(Vertx vertx, ContainerLauncher launcher, LiveSandbox live, Scope scope,
      Callbacks callbacks, Runnable onClosed, Runnable onRemoved, QuarryMetrics metrics,
      SandboxSettings.Fairness fairness, InFlightLimit tenantCallbacks) {
    this.vertx = vertx;
    this.fairness = fairness;
    this.serving = new CallbackServing(vertx, new CallbackServing.Session() {
      @Override
      public String id() {
        return GrpcSandboxSession.this.id();
      }

      @Override
      public Cell current(String cellId) {
        return GrpcSandboxSession.this.current(cellId);
      }

      @Override
      public boolean isClosed() {
        return GrpcSandboxSession.this.isClosed();
      }

      @Override
      public boolean ending() {
        synchronized (GrpcSandboxSession.this) {
          return closed || deadReason != null;
        }
      }

      @Override
      public void protocolError(String detail) {
        GrpcSandboxSession.this.protocolError(detail);
      }
    }, live, callbacks, metrics, fairness, tenantCallbacks);
    this.metrics = metrics;
    this.launcher = launcher;
    this.live = live;
    this.scope = scope;
    this.onClosed = onClosed;
    this.onRemoved = onRemoved;
    live.endpoint().onMessage(this::received);
    live.endpoint().onBacklog(this::backlog);
    live.endpoint().ended().onComplete(ar -> streamEnded());
  }

  @Override
  public String id() {
    return live.sandbox().id();
  }

  @Override
  public UUID tenantId() {
    return live.sandbox().tenantId();
  }

  @Override
  public Scope scope() {
    return scope;
  }

  @Override
  public Future<CellOutcome> execute(String code, CellOptions options, CellListener listener) {
    Objects.requireNonNull(code, "code");
    Objects.requireNonNull(options, "options");
    try {
      options.requireWithin(launcher.settings());
    } catch (IllegalArgumentException e) {
      return Future.failedFuture(e);
    }
    Cell c;
    synchronized (this) {
      if (closed) {
        return Future.failedFuture(new IllegalStateException("sandbox session " + id() + " is closed"));
      }
      if (cell != null) {
        return Future.failedFuture(new IllegalStateException(
            "a cell is already running in sandbox session " + id() + "; cells run one at a time"));
      }
      if (deadReason != null) {
        return Future.succeededFuture(new CellOutcome(CellOutcome.Status.KILLED, "", "",
            new CellError(CellError.SANDBOX_UNAVAILABLE, "the sandbox cannot run cells any more: " + deadReason, ""),
            false, 0));
      }
      c = new Cell("c" + (++cellCount), options, listener == null ? CellListener.NONE : listener, metrics);
      cell = c;
      c.timer = vertx.setTimer(options.wallTimeMs() + KILL_GRACE_MS, t -> kill(c, CellOutcome.Status.TIMEOUT,
          CellError.TIMEOUT, "the cell exceeded its wall time of " + options.wallTimeMs()
              + " ms and did not stop; its sandbox was killed"));
    }
    live.endpoint().send(GatewayMessage.newBuilder().setExecute(ExecuteRequest.newBuilder()
        .setCellId(c.id)
        .setCode(code)
        .setLimits(CellLimits.newBuilder()
            .setWallTimeMs(options.wallTimeMs())
            .setMaxOutputChars(options.maxOutputChars()))
        .addAllPreloadDocumentIds(options.preloadDocumentIds()))
        .build());
    return c.promise.future();
  }

  @Override
  public void cancel() {
    Cell c;
    synchronized (this) {
      c = cell;
      if (c == null || c.cancelTimer >= 0) {
        return;
      }
      c.cancelTimer = vertx.setTimer(CANCEL_GRACE_MS, t -> kill(c, CellOutcome.Status.CANCELLED,
          CellError.CANCELLED, "the cell did not stop when cancelled; its sandbox was killed"));
    }
    live.endpoint().send(GatewayMessage.newBuilder()
        .setCancel(Cancel.newBuilder().setCellId(c.id)).build());
  }

  @Override
  public Future<Void> close() {
    return close(new CellError(CellError.CANCELLED, "the session was closed while the cell ran", ""));
  }

  /** Closes the session; a cell running now ends at once with {@code why}. */
  Future<Void> close(CellError why) {
    Cell c;
    synchronized (this) {
      if (closing != null) {
        return closing;
      }
      closed = true;
      c = cell;
      cell = null;
      serving.clear();
      if (stallTimer >= 0) {
        vertx.cancelTimer(stallTimer);
      }
      onClosed.run();
      closing = removeSandbox();
    }
    if (c != null) {
      c.end(new CellOutcome(CellOutcome.Status.CANCELLED, c.stdout(), c.stderr(), why,
          c.truncated(), c.elapsedMs()));
      vertx.cancelTimer(c.timer);
    }
    return closing;
  }

  // --- what the runner sends ---

  private void received(SandboxMessage message) {
    switch (message.getKindCase()) {
      case OUTPUT -> {
        Cell c = current(message.getOutput().getCellId());
        if (c != null) {
          c.output(message.getOutput().getChannel() == OutputChannel.OUTPUT_CHANNEL_STDERR
              ? CellListener.Stream.STDERR : CellListener.Stream.STDOUT, message.getOutput().getText());
        }
      }
      case CALLBACK -> serving.serve(message.getCallback());
      case FILE_READ -> {
        Cell c = current(message.getFileRead().getCellId());
        if (c != null && message.getFileRead().getPath().length() <= MAX_FILE_READ_PATH_CHARS) {
          c.notify(() -> c.listener.fileRead(message.getFileRead().getPath()));
        }
      }
      case RESULT -> finish(message.getResult());
      default -> protocolError("unexpected message from the runner: " + message.getKindCase());
    }
  }

  private synchronized Cell current(String cellId) {
    return cell != null && cell.id.equals(cellId) ? cell : null;
  }

  private void finish(CellResult r) {
    Cell c;
    synchronized (this) {
      c = cell;
      if (c == null || !c.id.equals(r.getCellId())) {
        return;
      }
      cell = null;
    }
    vertx.cancelTimer(c.timer);
    vertx.cancelTimer(c.cancelTimer);
    if (!r.getValueRepr().isEmpty()) {
      c.value(r.getValueRepr());
    }
    CellOutcome.Status status = switch (r.getStatus()) {
      case CELL_STATUS_OK -> CellOutcome.Status.OK;
      case CELL_STATUS_ERROR -> CellOutcome.Status.ERROR;
      case CELL_STATUS_TIMEOUT -> CellOutcome.Status.TIMEOUT;
      case CELL_STATUS_CANCELLED -> CellOutcome.Status.CANCELLED;
      default -> CellOutcome.Status.KILLED;
    };
    CellError error = switch (r.getStatus()) {
      case CELL_STATUS_OK -> null;
      case CELL_STATUS_ERROR -> new CellError(clip(nonEmpty(r.getErrorType(), "RuntimeError"), MAX_ERROR_TYPE_CHARS),
          clip(r.getErrorMessage(), MAX_ERROR_CHARS), clip(r.getTraceback(), MAX_ERROR_CHARS));
      case CELL_STATUS_TIMEOUT -> new CellError(CellError.TIMEOUT, clip(nonEmpty(r.getErrorMessage(),
          "the cell exceeded its wall time of " + c.options.wallTimeMs() + " ms"), MAX_ERROR_CHARS),
          clip(r.getTraceback(), MAX_ERROR_CHARS));
      case CELL_STATUS_CANCELLED -> new CellError(CellError.CANCELLED, clip(nonEmpty(r.getErrorMessage(),
          "the cell was cancelled"), MAX_ERROR_CHARS), clip(r.getTraceback(), MAX_ERROR_CHARS));
      default -> new CellError(CellError.SANDBOX_CRASHED, "the runner reported an unknown cell status", "");
    };
    if (error != null && status != CellOutcome.Status.ERROR && status != CellOutcome.Status.TIMEOUT
        && status != CellOutcome.Status.CANCELLED) {
      status = CellOutcome.Status.KILLED;
    }
    // The runner's figure, but never more than the gateway saw the cell take (nor negative).
    long durationMs = Math.max(0, Math.min(r.getDurationMs(), c.elapsedMs()));
    c.end(new CellOutcome(status, c.stdout(), c.stderr(), error, r.getTruncated() || c.truncated(),
        durationMs));
  }

  private static String nonEmpty(String s, String dflt) {
    return s == null || s.isEmpty() ? dflt : s;
  }

  /*
   * Sizes are counted as the runner counts them (Python's len: code points, not UTF-16 units), so
   * that text the runner kept within a limit is never cut again here.
   */

  /** {@code s} cut to {@code max} characters as the runner clips errors, unless the runner already did. */
  static String clip(String s, int max) {
    if (s.length() <= max + CLIP_SUFFIX_ROOM) {
      return s; // fewer units, so surely fewer characters
    }
    int chars = s.codePointCount(0, s.length());
    if (chars <= max + CLIP_SUFFIX_ROOM) {
      return s;
    }
    return cut(s, max) + "... [" + (chars - max) + " more characters]";
  }

  /** The first {@code n} characters (code points) of {@code s}. */
  static String cut(String s, int n) {
    if (s.length() <= n) {
      return s;
    }
    int chars = s.codePointCount(0, s.length());
    return chars <= n ? s : s.substring(0, s.offsetByCodePoints(0, n));
  }

  /** The line the runner adds where it cuts output ({@code OutputCapture.marker}); the gateway adds the same. */
  static String truncationMarker(long limit) {
    return "\n[output truncated: over the limit of " + limit + " characters]\n";
  }

  private synchronized boolean isClosed() {
    return closed;
  }

  /**
   * The stream to the runner is full (it does not read) or drained again. While full no new
   * callback starts, so what waits unsent is at most the replies already in flight; if it stays
   * full for {@code QUARRY_SANDBOX_STALL_MS}, the sandbox is killed and its cell ends
   * {@link CellError#SANDBOX_STALLED}.
   */
  private void backlog(boolean full) {
    if (full) {
      serving.pause();
      synchronized (this) {
        if (stallTimer < 0 && !closed) {
          stallTimer = vertx.setTimer(fairness.stallTimeout().toMillis(), t -> stalled());
        }
      }
      return;
    }
    synchronized (this) {
      if (stallTimer >= 0) {
        vertx.cancelTimer(stallTimer);
        stallTimer = -1;
      }
    }
    serving.resume();
  }

  private void stalled() {
    Cell c;
    synchronized (this) {
      stallTimer = -1;
      c = cell;
    }
    String message = "the sandbox left the gateway's replies unread for " + fairness.stallTimeout().toMillis()
        + " ms (QUARRY_SANDBOX_STALL_MS); its sandbox was killed";
    LOG.warn("sandbox {}: {}", id(), message);
    metrics.sandboxKilled("stalled");
    if (c != null) {
      kill(c, CellOutcome.Status.KILLED, CellError.SANDBOX_STALLED, message);
    } else {
      markDead(message);
      killContainer();
    }
  }

  // --- how a sandbox ends ---

  private void protocolError(String detail) {
    LOG.warn("sandbox {}: {}", id(), detail);
    Cell c;
    synchronized (this) {
      c = cell;
    }
    if (c != null) {
      kill(c, CellOutcome.Status.KILLED, CellError.SANDBOX_CRASHED, "protocol error: " + detail);
    } else {
      markDead("protocol error: " + detail);
      killContainer();
    }
  }

  /** Ends the cell with the given outcome at once, then kills the container (the stream end follows). */
  private void kill(Cell c, CellOutcome.Status status, String type, String message) {
    synchronized (this) {
      if (cell != c) {
        return;
      }
      cell = null;
      if (deadReason == null) {
        deadReason = message;
      }
    }
    vertx.cancelTimer(c.timer);
    vertx.cancelTimer(c.cancelTimer);
    c.end(new CellOutcome(status, c.stdout(), c.stderr(), new CellError(type, message, ""), c.truncated(),
        c.elapsedMs()));
    if (status == CellOutcome.Status.TIMEOUT) {
      metrics.sandboxKilled("timeout");
    }
    killContainer();
  }

  private void killContainer() {
    vertx.executeBlocking(() -> launcher.kill(live.sandbox()), false)
        .onFailure(e -> LOG.warn("could not kill sandbox {}: {}", id(), e.getMessage()));
  }

  private synchronized void markDead(String reason) {
    if (deadReason == null) {
      deadReason = reason;
    }
  }

  /** The stream ended: a cell still running died with its container; the container goes either way. */
  private void streamEnded() {
    markDead("its runner disconnected");
    Cell c;
    synchronized (this) {
      c = cell;
    }
    if (c == null) {
      removeSandbox();
      return;
    }
    vertx.executeBlocking(this::diagnose, false)
        .otherwise(e -> new CellError(CellError.SANDBOX_CRASHED,
            "the sandbox stopped while the cell ran (" + dev.quarry.config.HostPaths.reason(e) + ")", ""))
        .onSuccess(error -> {
          synchronized (this) {
            if (cell != c) {
              return;
            }
            cell = null;
          }
          vertx.cancelTimer(c.timer);
          vertx.cancelTimer(c.cancelTimer);
          c.end(new CellOutcome(CellOutcome.Status.KILLED, c.stdout(), c.stderr(), error, c.truncated(),
              c.elapsedMs()));
        })
        .onComplete(ar -> removeSandbox());
  }

  /** Blocking: why the container went, as the engine saw it. */
  private CellError diagnose() {
    ContainerLauncher.ContainerState state;
    try {
      state = launcher.exitState(live.sandbox(), EXIT_WAIT);
    } catch (ContainerException e) {
      if (e.reason() == ContainerException.Reason.NOT_FOUND) {
        return new CellError(CellError.SANDBOX_CRASHED, "the sandbox container disappeared while the cell ran", "");
      }
      launcher.kill(live.sandbox());
      return new CellError(CellError.SANDBOX_CRASHED,
          "the sandbox's runner disconnected while the cell ran; the container was killed", "");
    }
    if (state.oomKilled()) {
      metrics.sandboxKilled("oom");
      return new CellError(CellError.OUT_OF_MEMORY,
          "the sandbox ran out of memory and was killed while the cell ran", "");
    }
    return new CellError(CellError.SANDBOX_CRASHED,
        "the sandbox stopped while the cell ran (exit code " + state.exitCode() + ")", "");
  }

  /** Stops listening, removes the container and its run directory (socket, scoped documents). Once. */
  private Future<Void> removeSandbox() {
    Promise<Void> p;
    synchronized (this) {
      if (removal != null) {
        return removal;
      }
      p = Promise.promise();
      removal = p.future();
    }
    Future<Void> stopped;
    try {
      stopped = live.endpoint().close().otherwiseEmpty();
    } catch (RuntimeException e) {
      stopped = Future.succeededFuture();
    }
    stopped.compose(v -> vertx.<Void>executeBlocking(() -> {
          launcher.remove(live.sandbox());
          return null;
        }, false))
        .onComplete(ar -> onRemoved.run())
        .onComplete(p);
    return p.future();
  }

  /** One running cell: its output so far and what waits for its end. */
  static final class Cell {
    final String id;
    final CellOptions options;
    final CellListener listener;
    final QuarryMetrics metrics;
    final Promise<CellOutcome> promise = Promise.promise();
    final long startNanos = System.nanoTime();
    private final StringBuilder stdout = new StringBuilder();
    private final StringBuilder stderr = new StringBuilder();
    private long chars;
    private boolean truncated;
    /** The gateway cut this cell's output (the runner did not keep its limit): nothing more is kept. */
    private boolean gatewayCut;
    long timer = -1;
    long cancelTimer = -1;
    /** The places of this cell's callbacks being served; null once the cell ended. */
    private java.util.Set<CallbackServing.Places> serving = new java.util.HashSet<>();

    Cell(String id, CellOptions options, CellListener listener, QuarryMetrics metrics) {
      this.id = id;
      this.metrics = metrics;
      this.options = options;
      this.listener = listener;
    }

    /**
     * Printed output, within the cell's budget: {@code maxOutputChars} plus the runner's own marker,
     * which is all a runner that keeps the limit sends. Past it the text is cut, the same marker
     * added (once) and the rest dropped, as the runner would have done.
     */
    void output(CellListener.Stream channel, String text) {
      String kept;
      synchronized (this) {
        kept = take(text);
        (channel == CellListener.Stream.STDERR ? stderr : stdout).append(kept);
      }
      if (!kept.isEmpty()) {
        notify(() -> listener.output(channel, kept));
      }
    }

    /** The REPL value, shown after the output on a line of its own, within the same budget. */
    void value(String repr) {
      String shown;
      synchronized (this) {
        String kept = take(repr);
        if (kept.isEmpty()) {
          return;
        }
        shown = stdout.isEmpty() || stdout.charAt(stdout.length() - 1) == '\n' ? kept : "\n" + kept;
        stdout.append(shown);
      }
      notify(() -> listener.output(CellListener.Stream.STDOUT, shown));
    }

    /** What of {@code text} fits what is left of the budget, with the marker when it is cut. */
    private String take(String text) {
      if (gatewayCut) {
        return "";
      }
      String marker = truncationMarker(options.maxOutputChars());
      long room = Math.max(0, options.maxOutputChars() + marker.length() - chars);
      long length = text.codePointCount(0, text.length());
      if (length <= room) {
        chars += length;
        return text;
      }
      // A runner that kept the limit would have cut at the limit itself: so does the gateway.
      gatewayCut = true;
      truncated = true;
      int keep = (int) Math.max(0, options.maxOutputChars() - chars);
      chars += keep;
      return cut(text, keep) + marker;
    }

    synchronized boolean truncated() {
      return truncated;
    }

    synchronized String stdout() {
      return stdout.toString();
    }

    synchronized String stderr() {
      return stderr.toString();
    }

    long elapsedMs() {
      return (System.nanoTime() - startNanos) / 1_000_000;
    }

    /** A callback of this cell starts being served; false when the cell has ended. */
    synchronized boolean admit(CallbackServing.Places places) {
      if (serving == null) {
        return false;
      }
      serving.add(places);
      return true;
    }

    synchronized void forget(CallbackServing.Places places) {
      if (serving != null) {
        serving.remove(places);
      }
    }

    /**
     * Ends the cell once. Its callbacks still being served give their places back first, so that
     * they are back by the time anyone hears the outcome; their late completions give back nothing.
     */
    void end(CellOutcome outcome) {
      java.util.Set<CallbackServing.Places> running;
      synchronized (this) {
        running = serving;
        serving = null;
      }
      if (running != null) {
        running.forEach(CallbackServing.Places::giveBack);
      }
      if (promise.tryComplete(outcome)) {
        metrics.cellFinished(outcome(outcome), Duration.ofNanos(System.nanoTime() - startNanos));
      }
    }

    /** The outcome label of quarry_sandbox_cells: a closed set, whatever the Python error type. */
    private static String outcome(CellOutcome o) {
      if (o.success()) {
        return "ok";
      }
      String type = o.error() == null ? "" : o.error().type();
      return switch (type) {
        case CellError.TIMEOUT -> "timeout";
        case CellError.CANCELLED -> "cancelled";
        case CellError.OUT_OF_MEMORY -> "oom";
        case CellError.SANDBOX_CRASHED, CellError.SANDBOX_UNAVAILABLE -> "killed";
        default -> o.status() == CellOutcome.Status.ERROR ? "error" : "killed";
      };
    }

    /** A listener that throws must not take the session down with it. */
    void notify(Runnable call) {
      try {
        call.run();
      } catch (Throwable e) {
        LOG.warn("cell listener failed: {}", e.toString());
      }
    }
  }
}
