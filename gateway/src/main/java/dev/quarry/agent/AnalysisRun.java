package dev.quarry.agent;

import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionMessageParam;
import com.openai.models.chat.completions.ChatCompletionSystemMessageParam;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import dev.quarry.config.HostPaths;
import dev.quarry.sandbox.CallbackArguments;
import dev.quarry.sandbox.CallbackType;
import dev.quarry.sandbox.CellListener;
import dev.quarry.sandbox.CellOptions;
import dev.quarry.sandbox.CellOutcome;
import dev.quarry.sandbox.SandboxCapacityExhausted;
import dev.quarry.sandbox.SandboxQuotaExceeded;
import dev.quarry.sandbox.SandboxSession;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The loop of one analysis, as straight-line code on a virtual thread of its own: ask the model,
 * run the code it sends in the analysis' sandbox, give it the results, until it answers with
 * {@code {"answer", "program"}}, fails, runs out of a budget or is cancelled. Everything it does is
 * emitted as events (stored as they happen); the sandbox is closed on every path.
 */
final class AnalysisRun implements Runnable {
  private static final Logger log = LoggerFactory.getLogger(AnalysisRun.class);


  private final AnalysisService.Deps deps;
  private final LiveAnalysis live;
  private final AnalysisRequest request;
  private Budgets budgets;
  private final Citations citations;
  /** Callbacks heard but not recorded as events, their budget being spent (each is refused). */
  private final AtomicLong unrecordedCallbacks = new AtomicLong();
  private final AtomicLong promptTokens = new AtomicLong();
  private final AtomicLong completionTokens = new AtomicLong();
  private final AtomicReference<SandboxSession> session = new AtomicReference<>();
  /** Completed by a cancel: tells a sandbox request still waiting for room to give up. */
  private final Promise<Void> cancelled = Promise.promise();
  private final List<ChatCompletionMessageParam> messages = new ArrayList<>();
  /** Token metering writes, all awaited before the end is recorded. */
  private final List<Future<Void>> writes = new ArrayList<>();
  /** Tokens used and not yet reported to the meter (llm() calls add to it from the sandbox's event loop). */
  private final AtomicLong unmetered = new AtomicLong();
  private BudgetedCallbacks callbacks;
  /** The callbacks' record: live ones are recorded, recorded ones answered again (a rebuild). */
  private RecordedCallbacks recorded;
  /** The records this run goes through before it runs live (null: a new question, nothing to rebuild). */
  private final Rebuild rebuild;
  private Instant deadline;
  /**
   * When the running (or last) cell must end: its callbacks' llm() calls end by it rather than
   * outlive the cell (R6-8). Never later than {@link #deadline}.
   */
  private volatile Instant cellDeadline;
  private int turns;
  private long startedNanos;
  private int executions;
  private int corrections;
  /** The loop's thread while it waits for the model (a hand-off interrupts that wait). */
  private volatile Thread modelCall;

  AnalysisRun(AnalysisService.Deps deps, LiveAnalysis live, AnalysisRequest request) {
    this(deps, live, request, null);
  }

  /** A run that first goes through {@code rebuild}'s records: a taken-over analysis, or a follow-up. */
  AnalysisRun(AnalysisService.Deps deps, LiveAnalysis live, AnalysisRequest request, Rebuild rebuild) {
    this.rebuild = rebuild;
    this.deps = deps;
    this.live = live;
    this.request = request;
    this.budgets = request.budgets();
    this.citations = new Citations(request.scope()::includes);
  }

  @Override
  public void run() {
    Instant started = deps.clock().instant();
    startedNanos = System.nanoTime();
    deps.metrics().analysisStarted();
    deadline = started.plusMillis(budgets.wallTimeMs());
    AnalysisRecord own = rebuild == null ? null : rebuild.own();
    if (own != null) {
      deadline = started.plus(own.wallTimeLeft(Duration.ofMillis(budgets.wallTimeMs())));
    }
    cellDeadline = deadline;
    AnalysisOutcome end;
    try {
      if (own != null && own.lastSeq() > 0) {
        live.emit(AnalysisEvent.MOVED, new JsonObject().put("moves", own.moves())
            .put("steps_to_rebuild", own.finishedCells())
            .put("note", "the analysis moved to another gateway replica (its replica stopped or handed it off);"
                + " it is rebuilt from its record and goes on from its last recorded step"));
      } else {
        JsonObject first = new JsonObject()
            .put("analysis_id", live.id().toString())
            .put("question", request.question())
            .put("document_ids", Conversation.ids(request.scope().documentIds()))
            .put("model", deps.model().model())
            .put("budgets", budgets.toJson());
        // What a chat client sent beside its question is part of the record: a reader of the events
        // sees everything the model was given.
        if (!request.conversation().isEmpty()) {
          first.put("conversation", Conversation.turns(request.conversation()));
        }
        if (!request.instructions().isEmpty()) {
          first.put("instructions", request.instructions());
        }
        if (rebuild != null && rebuild.followedId() != null) {
          first.put("follows", rebuild.followedId().toString());
        }
        live.emit(AnalysisEvent.STARTED, first);
      }
      end = loop();
    } catch (Exception e) {
      // Exception, not RuntimeException: Future.await() rethrows a failure's cause as it is, checked
      // ones included (a PostgreSQL socket reset mid-restart), and the end must be recorded anyway.
      if (live.cancelled()) {
        end = cancelledEnd();
      } else {
        log.error("analysis {} failed unexpectedly", live.id(), e);
        end = new AnalysisOutcome.Failed("Internal", "the analysis failed inside the gateway; its log has the details");
      }
    } finally {
      SandboxSession s = session.getAndSet(null);
      if (s != null) {
        try {
          s.close().await();
        } catch (Exception e) {
          log.warn("analysis {}: closing sandbox {} failed: {}", live.id(), s.id(), e.toString());
        }
      }
    }
    if (live.handedOff()) {
      deps.handedOff(live);
      return;
    }
    finish(end);
  }

  /** Runs the turns until the analysis ends, and says how; a step that ends it returns its outcome. */
  private AnalysisOutcome loop() {
    live.onCancel(() -> {
      cancelled.tryComplete();
      Thread waiting = modelCall;
      if (waiting != null && live.handedOff()) {
        waiting.interrupt();
      }
      SandboxSession s = session.get();
      if (s != null) {
        s.cancel();
      }
    });
    // Past the caps on events the cell is stopped, and the analysis ends once it has (eventsCapped()).
    live.onCapped(() -> {
      SandboxSession s = session.get();
      if (s != null) {
        s.cancel();
      }
    });
    Optional<AnalysisOutcome> end = openSandbox();
    if (end.isPresent()) {
      return end.get();
    }
    // The conversation starts with the first question's words: this one's, or, for a follow-up or a
    // take-over, the first recorded analysis' (the model is given exactly what it was given then).
    AnalysisRequest opening = rebuild != null && rebuild.first() != null ? AnalysisRecords.request(rebuild.first()) : request;
    if (rebuild != null && rebuild.inFollowed()) {
      budgets = AnalysisRecords.request(rebuild.current()).budgets();
      callbacks.budgets(budgets);
    }
    messages.add(ChatCompletionMessageParam.ofSystem(
        ChatCompletionSystemMessageParam.builder().content(SystemPrompt.TEXT).build()));
    if (!opening.instructions().isBlank()) {
      messages.add(ChatCompletionMessageParam.ofSystem(ChatCompletionSystemMessageParam.builder()
          .content(Conversation.CALLER_INSTRUCTIONS + opening.instructions()).build()));
    }
    messages.add(Conversation.user(Conversation.firstUserMessage(opening)));
    while (true) {
      end = overBudget();
      if (end.isPresent()) {
        return end.get();
      }
      ModelTurn turn;
      try {
        turn = askModel();
      } catch (ModelFailure e) {
        return modelFailed(e);
      }
      if (turn == null) {
        return new AnalysisOutcome.Failed("ModelRejected", "the model endpoint returned no choices");
      }
      messages.add(turn.toParam());
      if (!turn.calls().isEmpty()) {
        for (ModelTurn.Call call : turn.calls()) {
          end = runToolCall(call);
          if (end.isPresent()) {
            return end.get();
          }
        }
        continue;
      }
      String content = turn.content() == null ? "" : turn.content();
      if (executions == 0) {
        end = correct("NoExecution", Conversation.NO_EXECUTION_CORRECTION, "the model answered without running any code");
      } else {
        try {
          FinalAnswer answer = FinalAnswer.parse(content);
          if (rebuild != null && rebuild.inFollowed()) {
            followUp(rebuild.next());
            continue;
          }
          return new AnalysisOutcome.Succeeded(answer);
        } catch (IllegalArgumentException malformed) {
          end = correct("MalformedAnswer", String.format(Locale.ROOT, Conversation.MALFORMED_CORRECTION, malformed.getMessage()),
              "the final message was not {\"answer\", \"program\"}: " + malformed.getMessage());
        }
      }
      if (end.isPresent()) {
        return end.get();
      }
    }
  }

  /** Opens the analysis' sandbox; the outcome when none could be had, or the analysis was cancelled meanwhile. */
  private Optional<AnalysisOutcome> openSandbox() {
    // llm() calls are counted in the tenant's daily tokens by the callbacks themselves; the budget
    // only adds them to the analysis' own usage.
    // Each callback's answer is recorded (so that a rebuild answers it again without paying again).
    recorded = new RecordedCallbacks(CallbackSource.of(deps.callbacks().forTenant(live.tenantId(), request.scope(),
        () -> cellDeadline)), live::callback);
    callbacks = new BudgetedCallbacks(recorded, budgets, citations, this::addCallbackTokens, () -> promptTokens.get() + completionTokens.get());
    try {
      // Cancelled while it waits for room: the wait ends at once (and the sandbox it waited for
      // goes to someone else); cancelled while its container starts: it is closed below.
      session.set(deps.sandboxes().open(live.tenantId(), request.scope(), callbacks, cancelled.future())
          .await());
    } catch (Exception e) {
      if (live.cancelled()) {
        return Optional.of(cancelledEnd());
      }
      log.warn("analysis {}: no sandbox: {}", live.id(), e.toString());
      if (rebuild != null && rebuild.own() != null
          && (e instanceof SandboxCapacityExhausted || e instanceof SandboxQuotaExceeded)) {
        // Taken over by a replica with no room for it (a drain moves its analyses onto the others):
        // given back for another replica, or this one later, rather than failed.
        live.handBackQuietly();
        return Optional.of(cancelledEnd());
      }
      if (e instanceof SandboxCapacityExhausted) {
        return failed("SandboxCapacityExhausted", e.getMessage());
      }
      if (e instanceof SandboxQuotaExceeded) {
        return failed("SandboxQuotaExceeded", e.getMessage());
      }
      return failed("SandboxUnavailable", "no sandbox could be started for this analysis: "
          + (e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage()));
    }
    return live.cancelled() ? Optional.of(cancelledEnd()) : Optional.empty();
  }

  private static Optional<AnalysisOutcome> failed(String type, String message) {
    return Optional.of(new AnalysisOutcome.Failed(type, message));
  }

  private static Optional<AnalysisOutcome> budget(String budget, String message) {
    return Optional.of(new AnalysisOutcome.BudgetExhausted(budget, message));
  }

  /**
   * Past the answer of an analysis this one follows up: the next question, with budgets and counts of
   * its own. {@code next} is the next record (a follow-up taken over) or null (this run's question).
   */
  private void followUp(AnalysisRecord next) {
    AnalysisRequest asked = next == null ? request : AnalysisRecords.request(next);
    budgets = asked.budgets();
    callbacks.budgets(budgets);
    turns = 0;
    executions = 0;
    corrections = 0;
    promptTokens.set(0);
    completionTokens.set(0);
    messages.add(Conversation.user(Conversation.FOLLOW_UP + asked.question()));
  }

  /** The outcome if the analysis may not take another turn or step: cancelled, or a budget spent. */
  private Optional<AnalysisOutcome> overBudget() {
    if (live.cancelled()) {
      return Optional.of(cancelledEnd());
    }
    if (live.eventsCapped()) {
      return eventsCapped();
    }
    if (turns >= budgets.modelTurns()) {
      return budget("model_turns", "the analysis used all of its " + budgets.modelTurns() + " model turns");
    }
    long tokens = promptTokens.get() + completionTokens.get();
    if (tokens >= budgets.tokens()) {
      return budget("tokens", "the analysis used " + tokens + " of its " + budgets.tokens() + " tokens");
    }
    if (!deps.clock().instant().isBefore(deadline)) {
      return budget("wall_time_ms", "the analysis ran out of its " + request.budgets().wallTimeMs() + " ms");
    }
    return Optional.empty();
  }

  /** The end of an analysis whose cell went past the caps on events (QUARRY_ANALYSIS_MAX_EVENTS / _CHARS). */
  private Optional<AnalysisOutcome> eventsCapped() {
    return budget("events", "the analysis' code went past the most events an analysis records ("
        + live.maxEvents() + " events or " + live.maxEventChars() + " characters: QUARRY_ANALYSIS_MAX_EVENTS,"
        + " QUARRY_ANALYSIS_MAX_EVENT_CHARS); its cell was stopped and its later output and callbacks were not recorded");
  }

  /**
   * The model's next turn: from the record while it has one (not asked again, its tokens counted as
   * they were), else asked and emitted. Null when the reply had no choices.
   */
  private ModelTurn askModel() {
    ModelTurn recordedTurn = rebuild == null ? null : rebuild.turn(turns);
    if (recordedTurn != null) {
      turns++;
      addCallbackTokens(recordedTurn.usage());
      return recordedTurn;
    }
    // What the last turn did is stored before the model is asked: the write checks that this replica
    // still holds the analysis, so one whose lease lapsed (a pause) learns it before paying for a turn.
    live.flushed().await();
    if (live.lostHold()) {
      throw new ModelFailure("Cancelled", "the analysis was taken over by another replica");
    }
    // A follow-up's conversation carries every earlier analysis' turns and results: one that alone
    // would take more than its tokens left is not sent, or a follow-up with a small budget would
    // spend the earlier analyses' tokens again in one request. (Elsewhere the budget is checked
    // before each turn, as it always was.)
    long estimate = rebuild == null || rebuild.followedId() == null ? 0 : promptTokensEstimate();
    long left = budgets.tokens() - promptTokens.get() - completionTokens.get();
    if (estimate > 0 && estimate >= left) {
      throw new ModelFailure("TokensExhausted", "the conversation so far is about " + estimate + " tokens ("
          + BudgetedCallbacks.CHARS_PER_TOKEN + " characters a token), more than the " + Math.max(0, left)
          + " left of this analysis' " + budgets.tokens() + " (budgets.tokens)");
    }
    ChatCompletion reply;
    modelCall = Thread.currentThread();
    try {
      // A hand-off (a drain) interrupts the wait: the turn is asked again where the analysis goes on.
      if (live.handedOff()) {
        throw new ModelFailure("Cancelled", "the analysis was handed off to another replica");
      }
      reply = deps.model().chat(messages, List.of(ExecuteCodeTool.DEFINITION), deadline);
    } finally {
      modelCall = null;
      if (live.handedOff()) {
        Thread.interrupted();
      }
    }
    turns++;
    addTokens(ModelClient.usage(reply));
    // Counted in the tenant's tokens at once: a replica that dies after this turn has paid for it.
    meter();
    ModelTurn turn = ModelTurn.of(reply);
    if (turn != null) {
      emitTurn(turn);
    }
    return turn;
  }

  /** The conversation's tokens, estimated from its JSON at {@link BudgetedCallbacks#CHARS_PER_TOKEN} characters a token. */
  private long promptTokensEstimate() {
    try {
      return com.openai.core.ObjectMappers.jsonMapper().writeValueAsString(messages).length()
          / BudgetedCallbacks.CHARS_PER_TOKEN;
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      return 0;
    }
  }

  /** How a model call that failed ends the analysis. */
  private AnalysisOutcome modelFailed(ModelFailure e) {
    if (live.cancelled() || e.type().equals("Cancelled")) {
      return cancelledEnd();
    }
    if (e.type().equals("OutOfTime")) {
      return new AnalysisOutcome.BudgetExhausted("wall_time_ms", e.getMessage());
    }
    if (e.type().equals("TokensExhausted")) {
      return new AnalysisOutcome.BudgetExhausted("tokens", e.getMessage());
    }
    return new AnalysisOutcome.Failed(e.type(), e.getMessage());
  }

  /** A model turn's tokens: the analysis' and, at the next {@link #meter()}, the tenant's. */
  private void addTokens(Usage usage) {
    addCallbackTokens(usage);
    unmetered.addAndGet(usage.total());
  }

  /** An llm() call's tokens: the analysis' (the tenant's account has them already). */
  private void addCallbackTokens(Usage usage) {
    promptTokens.addAndGet(usage.promptTokens());
    completionTokens.addAndGet(usage.completionTokens());
  }

  private void meter() {
    long tokens = unmetered.getAndSet(0);
    if (tokens > 0) {
      writes.add(deps.callbacks().tokens().used(live.tenantId(), tokens));
    }
  }

  private void emitTurn(ModelTurn turn) {
    Usage usage = turn.usage();
    live.emit(AnalysisEvent.MODEL_TURN, new JsonObject()
        .put("turn", turns)
        .put("content", turn.content())
        .put("tool_calls", turn.callsJson())
        .put("usage", new JsonObject().put("prompt_tokens", usage.promptTokens())
            .put("completion_tokens", usage.completionTokens())));
    live.usage(usageJson());
  }

  /** Runs one tool call as a step; the outcome when the step ends the analysis. */
  private Optional<AnalysisOutcome> runToolCall(ModelTurn.Call call) {
    String code;
    try {
      code = ExecuteCodeTool.code(call.name(), call.arguments());
    } catch (IllegalArgumentException e) {
      toolError(call.id(), "ToolError", e.getMessage());
      return Optional.empty();
    }
    if (executions >= budgets.executions()) {
      return budget("execute_code_calls", "the analysis used all of its " + budgets.executions()
          + " execute_code calls");
    }
    Optional<AnalysisOutcome> over = overBudget();
    if (over.isPresent()) {
      return over;
    }
    int step = ++executions;
    Rebuild.Cell plan = rebuild == null ? Rebuild.Cell.LIVE : rebuild.cell(step);
    AnalysisRecord record = plan == Rebuild.Cell.LIVE ? null : rebuild.current();
    if (record != null && !code.equals(record.codes().get(step))) {
      return failed(Rebuild.DIVERGED, "the rebuild of analysis " + record.id() + " diverged at step " + step
          + ": the recorded turn asks for other code than the recorded cell ran");
    }
    recorded.beginStep(step, record == null ? List.of() : record.callbacksOf(step), plan != Rebuild.Cell.REBUILD);
    if (plan == Rebuild.Cell.REBUILD) {
      return rebuildCell(record, step, code, call.id());
    }
    if (plan == Rebuild.Cell.LIVE) {
      live.emit(AnalysisEvent.CODE, new JsonObject().put("step", step).put("code", code));
    }
    OffsetDateTime startedAt = OffsetDateTime.now(deps.clock()).withOffsetSameInstant(ZoneOffset.UTC);
    CellOutcome outcome;
    try {
      outcome = runCell(code, plan == Rebuild.Cell.RESUME
          ? resumedListener(step, new Rebuild.SentOutput(record.sentOf(step))) : listener(step));
    } catch (Exception e) {
      if (live.cancelled()) {
        return Optional.of(cancelledEnd());
      }
      log.warn("analysis {}: step {} could not run: {}", live.id(), step, e.toString());
      return failed("SandboxUnavailable", "the sandbox could not run the code: " + e.getMessage());
    }
    JsonObject result = outcome.toToolResult();
    // The step and its result event in one batch: a record holds both or neither.
    live.stepEnded(new AnalysisStore.StepRecord(step, code, result, startedAt, outcome.durationMs()),
        new JsonObject().put("step", step).put("result", result));
    messages.add(ChatCompletionMessageParam.ofTool(ChatCompletionToolMessageParam.builder()
        .toolCallId(call.id()).content(result.encode()).build()));
    if (live.cancelled()) {
      return Optional.of(cancelledEnd());
    }
    return live.eventsCapped() ? eventsCapped() : Optional.empty();
  }

  /**
   * A cell the record ended, run again in this sandbox to rebuild its state: its callbacks answered
   * from the record only, nothing emitted or stored, its result checked against the recorded one,
   * which the model is given again as it was. The outcome when the rebuild cannot be trusted.
   */
  private Optional<AnalysisOutcome> rebuildCell(AnalysisRecord record, int step, String code, String callId) {
    JsonObject recordedResult = record.results().get(step);
    CellOutcome outcome;
    try {
      // Nothing emitted: its events are in the record already.
      outcome = runCell(code, new CellListener() {
        @Override
        public void fileRead(String path) {
          citations.fileRead(path);
        }
      });
    } catch (Exception e) {
      if (live.cancelled()) {
        return Optional.of(cancelledEnd());
      }
      return failed("SandboxUnavailable", "the sandbox could not rebuild step " + step + ": " + e.getMessage());
    }
    if (live.cancelled()) {
      return Optional.of(cancelledEnd());
    }
    String why = recorded.divergence();
    if (why == null && recorded.unused() > 0) {
      why = "step " + step + " made fewer callbacks than recorded (" + recorded.unused() + " not made again)";
    }
    if (why == null) {
      String difference = Rebuild.difference(outcome.toToolResult(), recordedResult);
      why = difference == null ? null : "step " + step + " ran again but " + difference;
    }
    if (why != null) {
      return failed(Rebuild.DIVERGED, "the rebuild of analysis " + record.id() + " from its record diverged: "
          + why + "; its state cannot be trusted, so it was not carried on");
    }
    messages.add(ChatCompletionMessageParam.ofTool(ChatCompletionToolMessageParam.builder()
        .toolCallId(callId).content(recordedResult.encode()).build()));
    return Optional.empty();
  }

  /**
   * Runs one cell in the analysis' sandbox, within the default cell time and what is left of the
   * analysis' own (a rebuilt cell too: a cheap follow-up cannot make the gateway run an expensive
   * cell for longer than it may run at all); its llm() calls end by the cell's deadline.
   */
  private CellOutcome runCell(String code, CellListener listener) {
    long left = Duration.between(deps.clock().instant(), deadline).toMillis();
    CellOptions defaults = deps.cellDefaults();
    CellOptions options = new CellOptions(Math.max(1, Math.min(defaults.wallTimeMs(), left)),
        defaults.maxOutputChars(), request.preload().stream().map(UUID::toString).toList());
    cellDeadline = deps.clock().instant().plusMillis(options.wallTimeMs());
    Future<CellOutcome> running = session.get().execute(code, options, listener);
    // A cancel that came just before the cell started found nothing to stop: stop it now.
    if (live.cancelled()) {
      session.get().cancel();
    }
    return running.await();
  }

  /**
   * The listener of a cell that a dead replica had started: its output and callbacks are emitted
   * beyond what the record shows sent, so that a follower sees each once.
   */
  private CellListener resumedListener(int step, Rebuild.SentOutput sent) {
    CellListener all = listener(step);
    return new CellListener() {
      @Override
      public void output(CellListener.Stream channel, String text) {
        String rest = sent.unsent(channel.wireName(), text);
        if (!rest.isEmpty()) {
          all.output(channel, rest);
        }
      }

      @Override
      public void callback(CallbackType kind, CallbackArguments arguments) {
        if (!sent.callbackSent()) {
          all.callback(kind, arguments);
        }
      }

      @Override
      public void fileRead(String path) {
        all.fileRead(path);
      }
    };
  }

  /** A tool call that could not run: the model hears why, as a CONTRACT-shaped result. */
  private void toolError(String callId, String type, String message) {
    JsonObject result = new JsonObject().put("success", false).put("stdout", "").put("stderr", "")
        .put("error", new JsonObject().put("type", type).put("message", message).put("traceback", ""))
        .put("truncated", false).put("duration_ms", 0);
    messages.add(ChatCompletionMessageParam.ofTool(ChatCompletionToolMessageParam.builder()
        .toolCallId(callId).content(result.encode()).build()));
  }

  private CellListener listener(int step) {
    return new CellListener() {
      @Override
      public void output(CellListener.Stream channel, String text) {
        live.emit(AnalysisEvent.OUTPUT, new JsonObject().put("step", step)
            .put("channel", channel.wireName()).put("text", text));
      }

      /**
       * A call as it arrives: recorded with a bounded preview of its arguments (their whole length
       * when cut), unless its kind's call budget is spent already, when it is refused at once and only
       * counted ({@code usage.unrecorded_callbacks}): a loop of refused calls costs no events.
       */
      @Override
      public void callback(CallbackType kind, CallbackArguments arguments) {
        BudgetedCallbacks budgeted = callbacks;
        if (budgeted != null && budgeted.spent(kind)) {
          unrecordedCallbacks.incrementAndGet();
          return;
        }
        JsonObject event = new JsonObject().put("step", step).put("kind", kind.wireName())
            .put("arguments", arguments.preview());
        if (arguments.cut()) {
          event.put("arguments_chars", arguments.chars()).put("arguments_cut", true);
        }
        live.emit(AnalysisEvent.CALLBACK, event);
      }

      @Override
      public void fileRead(String path) {
        citations.fileRead(path);
      }
    };
  }

  /** Asks the model to correct itself, or, with no correction turns left, the outcome that ends it. */
  private Optional<AnalysisOutcome> correct(String errorType, String correction, String failure) {
    if (corrections >= deps.settings().maxCorrections()) {
      return failed(errorType, failure + " (after " + corrections + " correction turns)");
    }
    corrections++;
    messages.add(Conversation.user(correction));
    return Optional.empty();
  }

  /** A cancel's outcome: cancelled, or failed when it was stopped for a reason (its tenant deleted). */
  private AnalysisOutcome cancelledEnd() {
    String[] failure = live.failure();
    if (failure != null) {
      return new AnalysisOutcome.Failed(failure[0], failure[1]);
    }
    return new AnalysisOutcome.Cancelled();
  }

  private JsonObject usageJson() {
    return new JsonObject()
        .put("prompt_tokens", promptTokens.get())
        .put("completion_tokens", completionTokens.get())
        .put("total_tokens", promptTokens.get() + completionTokens.get())
        .put("model_turns", turns)
        .put("execute_code_calls", executions)
        .put("search_calls", callbacks == null ? 0 : callbacks.searchCalls())
        .put("llm_calls", callbacks == null ? 0 : callbacks.llmCalls())
        .put("list_documents_calls", callbacks == null ? 0 : callbacks.listDocumentsCalls())
        .put("unrecorded_callbacks", unrecordedCallbacks.get())
        .put("corrections", corrections);
  }

  /**
   * Stores the outcome, then emits the one terminal event (whether or not storing worked, so that
   * no stream is left hanging), then lets waiters have the stored analysis.
   */
  private void finish(AnalysisOutcome outcome) {
    AnalysisOutcome end = withoutHostPaths(outcome);
    JsonArray cited = new JsonArray();
    JsonObject usage = usageJson();
    FinalAnswer answer = end instanceof AnalysisOutcome.Succeeded done ? done.answer() : null;
    try {
      meter();
      live.flushed().await();
      Future.join(writes).otherwiseEmpty().await();
      String[] stoppedFor = live.failure();
      boolean tenantGone = stoppedFor != null && "TenantDeleted".equals(stoppedFor[0]);
      if (live.writeFailure() != null && !tenantGone) {
        // Whatever the loop's end, its record lacks steps or events: say so rather than succeed.
        // (Not for a deleted tenant: its rows go while it stops, and that is what its stream says.)
        end = new AnalysisOutcome.Failed("StorageFailed", "the analysis ran but part of its record (steps or events) could not"
            + " be stored; the gateway's log has the details");
        answer = null;
      }
      try {
        describeFileCitations();
      } catch (Exception e) {
        // Titles of cited files are a nicety; their lookup failing must not cost the recorded end.
        log.warn("analysis {}: cited files left without titles: {}", live.id(), e.toString());
      }
      cited = citations.toJson();
      deps.store().finishDurably(live.tenantId(), live.id(), live.holder(), new AnalysisStore.Outcome(end.status().wire(), end.errorType(),
          end.message(), answer == null ? null : answer.answer(), answer == null ? null : answer.program(), cited,
          usage));
    } catch (AnalysisStore.LostHold lost) {
      // Another replica took it over meanwhile and carries it on: its end is that replica's to record.
      log.warn("analysis {}: {}; its end here is not recorded", live.id(), lost.getMessage());
      deps.metrics().analysisHandedOff();
      deps.finished(live);
      live.gone(new JsonObject().put("id", live.id().toString()).put("status", "running"));
      return;
    } catch (Exception e) {
      log.error("analysis {}: could not record its end", live.id(), e);
    }
    try {
      // Waited for: a client that starts its next analysis on seeing this one's end finds the place free.
      deps.release(live).await();
    } catch (Exception e) {
      log.warn("analysis {}: giving back its place failed: {}", live.id(), e.toString());
    }
    try {
      if (answer != null) {
        live.emit(AnalysisEvent.ANSWER, new JsonObject().put("status", end.status().wire()).put("answer", answer.answer())
            .put("program", answer.program()).put("citations", cited).put("usage", usage));
      } else {
        live.emit(AnalysisEvent.FAILED, new JsonObject().put("status", end.status().wire())
            .put("error", new JsonObject().put("type", end.errorType()).put("message", end.message()))
            .put("usage", usage));
      }
      live.flushed().await();
      live.complete(deps.store().get(live.tenantId(), live.id()).await().orElseThrow());
    } catch (Exception e) {
      log.error("analysis {}: could not read back its record", live.id(), e);
      live.complete(new JsonObject().put("id", live.id().toString()).put("status", end.status().wire()));
    } finally {
      deps.metrics().analysisFinished(end.status().wire(), Duration.ofNanos(System.nanoTime() - startedNanos), turns);
      deps.finished(live);
    }
  }

  /**
   * The outcome as it is stored and streamed: its message without host paths, whatever the part
   * that failed put in it (the record is the tenant's to read, and a model's to be shown). The
   * message as it was goes to the log.
   */
  private AnalysisOutcome withoutHostPaths(AnalysisOutcome end) {
    if (!HostPaths.holdsHostPath(end.message())) {
      return end;
    }
    log.warn("analysis {}: its error message held host paths, recorded without them: {}", live.id(), end.message());
    return switch (end) {
      case AnalysisOutcome.Failed f -> new AnalysisOutcome.Failed(f.errorType(), HostPaths.redact(f.message()));
      case AnalysisOutcome.BudgetExhausted b -> new AnalysisOutcome.BudgetExhausted(b.budget(),
          HostPaths.redact(b.detail()));
      default -> end;
    };
  }

  private void describeFileCitations() {
    List<UUID> untitled = List.copyOf(citations.untitled());
    if (untitled.isEmpty()) {
      return;
    }
    java.util.Set<UUID> found = new java.util.HashSet<>();
    deps.store().describe(live.tenantId(), untitled).await().forEach(r -> {
      found.add(r.getUUID("id"));
      citations.describe(r.getUUID("id"), r.getString("title"), r.getString("uri"));
    });
    // A file read is the sandbox's word: only documents of the tenant that exist are cited.
    citations.dropUndescribed(java.util.Set.copyOf(untitled), found);
  }
}
