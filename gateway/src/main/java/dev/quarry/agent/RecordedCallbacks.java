package dev.quarry.agent;

import dev.quarry.callbacks.Llm;
import dev.quarry.sandbox.CallbackFailure;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * An analysis' callbacks as its record keeps them. A live call is made of the tenant's services and
 * its outcome handed to the record ({@code sink}) before the code sees it; a call the record already
 * answers (the same kind and arguments, in the same cell) is answered from it, without calling or
 * paying again. While a recorded cell is rebuilt, live calls are not allowed: a call the record
 * does not hold means the rebuilt state is not the recorded one, and the cell's call fails and the
 * rebuild says so ({@link #divergence}).
 *
 * <p>Calls are matched by kind and a digest of their whole arguments, in the order they were made
 * among equal calls: the order of different calls made at once (a cell's asyncio.gather) does not
 * matter.
 */
final class RecordedCallbacks implements CallbackSource {
  private final CallbackSource live;
  private final Consumer<CallbackRecord> sink;
  private final Object lock = new Object();
  private final Map<String, Deque<CallbackRecord>> recorded = new HashMap<>();
  private final AtomicInteger nextOrdinal = new AtomicInteger();
  private volatile int step;
  private volatile boolean liveAllowed = true;
  private volatile String divergence;

  RecordedCallbacks(CallbackSource live, Consumer<CallbackRecord> sink) {
    this.live = live;
    this.sink = sink;
  }

  /**
   * The next cell's callbacks: answered from {@code record} first; beyond it, live when
   * {@code liveAllowed}, otherwise refused as a divergence.
   */
  void beginStep(int step, List<CallbackRecord> record, boolean liveAllowed) {
    synchronized (lock) {
      this.step = step;
      this.liveAllowed = liveAllowed;
      recorded.clear();
      int next = 1;
      for (CallbackRecord r : record) {
        recorded.computeIfAbsent(r.kind() + ' ' + r.digest(), k -> new ArrayDeque<>()).add(r);
        next = Math.max(next, r.ordinal() + 1);
      }
      nextOrdinal.set(next);
    }
  }

  /** Recorded calls of the step that the rebuilt cell did not make again (0 when it made them all). */
  int unused() {
    synchronized (lock) {
      return recorded.values().stream().mapToInt(Deque::size).sum();
    }
  }

  /** Why the rebuilt state is not the recorded one, or null while it is. */
  String divergence() {
    return divergence;
  }

  @Override
  public Future<JsonArray> search(String query, int limit) {
    return call(CallbackRecord.SEARCH, CallbackRecord.searchArguments(query, limit),
        () -> live.search(query, limit), CallbackRecord::value, r -> r.outcome().getJsonArray("value"));
  }

  @Override
  public Future<JsonArray> listDocuments() {
    return call(CallbackRecord.LIST_DOCUMENTS, "", live::listDocuments, CallbackRecord::value,
        r -> r.outcome().getJsonArray("value"));
  }

  @Override
  public Future<Llm.Reply> completion(String prompt, long maxCompletionTokens) {
    return call(CallbackRecord.LLM, prompt, () -> live.completion(prompt, maxCompletionTokens),
        reply -> CallbackRecord.value(reply.text()), r -> {
          JsonObject usage = r.usage() == null ? new JsonObject() : r.usage();
          return new Llm.Reply(r.outcome().getString("value"), usage.getLong("prompt_tokens", 0L),
              usage.getLong("completion_tokens", 0L));
        });
  }

  private <T> Future<T> call(String kind, String arguments, Supplier<Future<T>> call,
      java.util.function.Function<T, JsonObject> stored, java.util.function.Function<CallbackRecord, T> answer) {
    String digest = CallbackRecord.digest(kind, arguments);
    CallbackRecord found;
    int at;
    int ordinal;
    synchronized (lock) {
      Deque<CallbackRecord> same = recorded.get(kind + ' ' + digest);
      found = same == null ? null : same.poll();
      at = step;
      ordinal = found == null && liveAllowed ? nextOrdinal.getAndIncrement() : 0;
    }
    if (found != null) {
      Throwable failure = found.failure();
      return failure != null ? Future.failedFuture(failure) : Future.succeededFuture(answer.apply(found));
    }
    if (ordinal == 0) {
      String why = "step " + at + " called " + kind + "() with arguments its record does not hold";
      if (divergence == null) {
        divergence = why;
      }
      return Future.failedFuture(new CallbackFailure("RuntimeError", "the analysis is being rebuilt and " + why));
    }
    Future<T> made;
    try {
      made = call.get();
    } catch (RuntimeException e) {
      made = Future.failedFuture(e);
    }
    return made.andThen(ar -> {
      JsonObject usage = null;
      if (ar.succeeded() && ar.result() instanceof Llm.Reply reply) {
        usage = new JsonObject().put("prompt_tokens", reply.promptTokens())
            .put("completion_tokens", reply.completionTokens());
      }
      sink.accept(new CallbackRecord(at, ordinal, kind, digest,
          ar.succeeded() ? stored.apply(ar.result()) : CallbackRecord.failure(ar.cause()), usage));
    });
  }
}
