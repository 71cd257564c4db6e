package dev.quarry.api;

import dev.quarry.agent.AnalysisEvent;
import dev.quarry.agent.AnalysisRequest;
import dev.quarry.agent.AnalysisService;
import dev.quarry.agent.Budgets;
import dev.quarry.agent.LiveAnalysis;
import dev.quarry.sandbox.Scope;
import io.vertx.core.Future;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * The analyses API: ask a question (streamed as Server-Sent Events or answered as JSON), fetch and
 * list analyses, replay an analysis' events or its program.
 */
final class AnalysisRoutes {
  private static final long JSON_BODY_LIMIT = 1024 * 1024;
  private static final int LIST_DEFAULT = 50;
  private static final int LIST_MAX = 500;
  /** Stored events read and written at a time when a finished analysis' events are replayed. */
  static final int REPLAY_PAGE = 200;

  private final AnalysisService analyses;
  private final long bodyTimeoutMs;

  private final java.time.Duration heartbeat;

  /** The interval of the event streams' heartbeats (QUARRY_SSE_HEARTBEAT_SECONDS). */
  java.time.Duration heartbeat() {
    return heartbeat;
  }

  private final ResponseStreams streams;

  AnalysisRoutes(AnalysisService analyses, long bodyTimeoutMs, java.time.Duration heartbeat, ResponseStreams streams) {
    this.heartbeat = heartbeat;
    this.streams = streams;
    this.analyses = analyses;
    this.bodyTimeoutMs = bodyTimeoutMs;
  }

  /**
   * Each route starts with {@code tenantAuth}, the tenant's API key; {@code takeBody} and {@code
   * bodyRead} go around the reading of a request body ({@link BodyPlaces}).
   */
  void mount(Router router, io.vertx.core.Handler<RoutingContext> tenantAuth,
      io.vertx.core.Handler<RoutingContext> takeBody, io.vertx.core.Handler<RoutingContext> bodyRead) {
    router.post("/v1/analyses").handler(tenantAuth).handler(takeBody)
        .handler(LimitedBody.json(JSON_BODY_LIMIT, bodyTimeoutMs)).handler(bodyRead).handler(this::create);
    router.get("/v1/analyses").handler(tenantAuth).handler(this::list);
    router.get("/v1/analyses/:id").handler(tenantAuth).handler(this::get);
    router.get("/v1/analyses/:id/events").handler(tenantAuth).handler(this::events);
    router.post("/v1/analyses/:id/follow-ups").handler(tenantAuth).handler(takeBody)
        .handler(LimitedBody.json(JSON_BODY_LIMIT, bodyTimeoutMs)).handler(bodyRead).handler(this::followUp);
    router.post("/v1/analyses/:id/replay").handler(tenantAuth).handler(this::replay);
    router.post("/v1/analyses/:id/cancel").handler(tenantAuth).handler(this::cancel);
  }

  private void create(RoutingContext ctx) {
    JsonObject body = Requests.jsonObject(ctx.body().buffer());
    AnalysisRequest request = request(body);
    boolean stream = wantsStream(ctx, body);
    start(ApiRoutes.tenant(ctx), request)
        .onSuccess(live -> answer(ctx, live, stream))
        .onFailure(e -> ctx.fail(refusal(e)));
  }

  /** Its events as they happen (ended by the terminal one), or the analysis once it has ended. */
  private void answer(RoutingContext ctx, LiveAnalysis live, boolean stream) {
    if (stream) {
      stream(ctx, live, true, 0);
    } else {
      live.finished().onSuccess(analysis -> ApiRoutes.replyJson(ctx, 200, analysis)).onFailure(ctx::fail);
    }
  }

  /**
   * Another question to an answered analysis: a new analysis that follows it (same documents; the
   * earlier conversation and the earlier cells' variables and files are rebuilt from the record),
   * answered as {@code POST /v1/analyses} answers.
   */
  private void followUp(RoutingContext ctx) {
    UUID tenant = ApiRoutes.tenant(ctx);
    UUID id = analysisId(ctx);
    JsonObject body = Requests.jsonObject(ctx.body().buffer());
    for (String field : body.fieldNames()) {
      if (!Set.of("question", "budgets", "stream").contains(field)) {
        throw ApiError.badRequest("unknown_field", "field '" + field
            + "' is not part of a follow-up (question, budgets, stream; its documents are the analysis')");
      }
    }
    String question = question(body);
    Budgets budgets = budgets(body.getValue("budgets"));
    boolean stream = wantsStream(ctx, body);
    // Its documents are the followed analysis': the request's scope is not read.
    startOrFollow(tenant, new AnalysisRequest(question, Scope.ALL, List.of(), budgets), id, false)
        .onSuccess(live -> answer(ctx, live, stream))
        .onFailure(ctx::fail);
  }

  /**
   * Asks {@code request}'s question as a follow-up of {@code follows} (its documents, its rebuilt
   * state); a fresh analysis of {@code request} when {@code follows} is null, or, with
   * {@code orFresh}, when it cannot take one (not answered, its chain full). Fails 404 when the tenant
   * has no analysis {@code follows}.
   */
  Future<LiveAnalysis> startOrFollow(UUID tenant, AnalysisRequest request, UUID follows, boolean orFresh) {
    if (follows == null) {
      return start(tenant, request);
    }
    return analyses.followUp(tenant, follows, request.question(), request.budgets())
        .recover(e -> orFresh && e instanceof AnalysisService.AnalysisRefused r
            && (r.reason() == AnalysisService.AnalysisRefused.Reason.NOT_ANSWERED
                || r.reason() == AnalysisService.AnalysisRefused.Reason.FOLLOW_UPS_EXHAUSTED)
            ? analyses.start(tenant, request).map(java.util.Optional::of) : Future.failedFuture(e))
        .compose(found -> found.isPresent() ? Future.succeededFuture(found.get())
            : Future.<LiveAnalysis>failedFuture(missing(follows)))
        .recover(e -> Future.failedFuture(refusal(e)));
  }

  /** Starts an analysis as the tenant's quotas allow (the service asks them). */
  Future<LiveAnalysis> start(UUID tenant, AnalysisRequest request) {
    return analyses.start(tenant, request).recover(e -> Future.failedFuture(refusal(e)));
  }

  AnalysisService service() {
    return analyses;
  }

  private static boolean wantsStream(RoutingContext ctx, JsonObject body) {
    Object stream = body.getValue("stream");
    if (stream != null && !(stream instanceof Boolean)) {
      throw ApiError.badRequest("invalid_stream", "field 'stream' must be true or false");
    }
    if (stream != null) {
      return (Boolean) stream;
    }
    return EventStream.accepted(ctx);
  }

  private AnalysisRequest request(JsonObject body) {
    for (String field : body.fieldNames()) {
      if (!Set.of("question", "document_ids", "preload", "budgets", "stream").contains(field)) {
        throw ApiError.badRequest("unknown_field", "field '" + field
            + "' is not part of an analysis request (question, document_ids, preload, budgets, stream)");
      }
    }
    String question = question(body);
    List<UUID> scope = uuids(body.getValue("document_ids"), "document_ids");
    List<UUID> preload = preload(body.getValue("preload"), scope);
    return new AnalysisRequest(question, new Scope(Set.copyOf(scope)), preload, budgets(body.getValue("budgets")));
  }

  /** The body's field {@code question}, or a 400 {@code invalid_question} saying what is wrong with it. */
  private String question(JsonObject body) {
    Object rawQuestion = body.getValue("question");
    if (!(rawQuestion instanceof String question)) {
      throw ApiError.badRequest("invalid_question", rawQuestion == null
          ? "field 'question' is required" : "field 'question' must be a non-empty string");
    }
    String problem = questionProblem(question);
    if (problem != null) {
      throw ApiError.badRequest("invalid_question", "field 'question' " + problem);
    }
    return question;
  }

  /**
   * What is wrong with a question, worded to follow its name ("field 'question' ", "argument
   * 'question' "), or null: it must not be blank nor longer than {@code QUARRY_MAX_QUESTION_CHARS}.
   * The one check of a question on every surface (REST, chat completions' last message, MCP's ask).
   */
  String questionProblem(String question) {
    if (question.isBlank()) {
      return "must be a non-empty string";
    }
    int maxChars = analyses.settings().maxQuestionChars();
    if (question.length() > maxChars) {
      return "has " + question.length() + " characters; the limit is " + maxChars;
    }
    return null;
  }

  /**
   * The field {@code preload} of every surface that takes one: absent or false preloads nothing, a
   * list of ids preloads those, and true preloads the documents of {@code document_ids}, which must
   * then name some.
   */
  static List<UUID> preload(Object raw, List<UUID> scope) {
    if (raw == null || Boolean.FALSE.equals(raw)) {
      return List.of();
    }
    if (Boolean.TRUE.equals(raw)) {
      if (scope.isEmpty()) {
        throw ApiError.badRequest("invalid_preload", "'preload': true preloads the documents of 'document_ids',"
            + " which is empty; list the documents to preload");
      }
      return scope;
    }
    return uuids(raw, "preload");
  }

  /** The budgets a request asks for over the defaults, within the maxima. */
  Budgets budgets(Object rawBudgets) {
    if (rawBudgets != null && !(rawBudgets instanceof JsonObject)) {
      throw ApiError.badRequest("invalid_budgets", "field 'budgets' must be an object such as {\"model_turns\": 10}");
    }
    try {
      return analyses.settings().defaultBudgets().overriddenBy((JsonObject) rawBudgets,
          analyses.settings().maxBudgets());
    } catch (IllegalArgumentException e) {
      throw ApiError.badRequest("invalid_budgets", e.getMessage());
    }
  }

  static List<UUID> uuids(Object raw, String field) {
    if (raw == null) {
      return List.of();
    }
    if (!(raw instanceof JsonArray array)) {
      throw ApiError.badRequest("invalid_" + field, "field '" + field + "' must be a list of document ids");
    }
    Set<UUID> ids = new LinkedHashSet<>();
    for (int i = 0; i < array.size(); i++) {
      Object element = array.getValue(i);
      try {
        ids.add(Requests.documentId(element instanceof String s ? s : String.valueOf(element)));
      } catch (ApiError e) {
        throw ApiError.badRequest("invalid_" + field, "field '" + field + "[" + i + "]' = " + element + " is not a UUID");
      }
    }
    return new ArrayList<>(ids);
  }

  /**
   * Sends the analysis' events after {@code afterSeq} as they happen (0: from the first), and ends
   * after the terminal one. A client that goes away stops listening, and cancels the analysis when so
   * configured.
   */
  private void stream(RoutingContext ctx, LiveAnalysis live, boolean owner, long afterSeq) {
    stream(ctx, live, owner, afterSeq, () -> { });
  }

  /** As above; {@code stopped} runs once the stream stops, whichever way. */
  private void stream(RoutingContext ctx, LiveAnalysis live, boolean owner, long afterSeq, Runnable stopped) {
    HttpServerResponse response = ctx.response();
    EventStream.open(response, ctx.vertx(), heartbeat).putHeader("X-Analysis-Id", live.id().toString());
    EventStream.follow(ctx.request(), ctx.vertx(), live, afterSeq, event -> response.write(event.sse()), () -> {
      if (owner && analyses.settings().cancelOnDisconnect()) {
        live.cancel();
      }
    }, stopped);
  }

  private void list(RoutingContext ctx) {
    int limit = Requests.limit(ctx.request().getParam("limit"), LIST_DEFAULT, LIST_MAX);
    streams.pages(ctx, 200, ApiRoutes.JSON, new AnalysisPages.Listing(analyses.store(), ApiRoutes.tenant(ctx), limit)::next);
  }

  private void get(RoutingContext ctx) {
    UUID tenant = ApiRoutes.tenant(ctx);
    UUID id = analysisId(ctx);
    analyses.store().record(tenant, id)
        .map(found -> found.orElseThrow(() -> missing(id)))
        .onSuccess(analysis -> streams.pages(ctx, 200, ApiRoutes.JSON,
            new AnalysisPages.Record(analyses.store(), tenant, id, analysis)::next))
        .onFailure(ctx::fail);
  }

  /**
   * An analysis' events: followed in memory when it runs here; followed through the store when it
   * runs on another replica or has only just ended ({@link StoredFollow}); replayed from the store
   * when it ended a while ago. Either way every event after the Last-Event-ID comes once, in order,
   * and a stream of an analysis that runs ends with its terminal event.
   */
  private void events(RoutingContext ctx) {
    UUID tenant = ApiRoutes.tenant(ctx);
    UUID id = analysisId(ctx);
    long afterSeq = lastEventId(ctx);
    var running = analyses.running(tenant, id).filter(live -> inMemory(live, afterSeq));
    if (running.isPresent()) {
      follow(ctx, running.get(), afterSeq);
      return;
    }
    analyses.store().progress(tenant, id, StoredFollow.SETTLED)
        .map(found -> found.orElseThrow(() -> missing(id)))
        .onSuccess(progress -> {
          // It may have begun running here since the first look (it is recorded before it runs).
          var stillRunning = analyses.running(tenant, id).filter(live -> inMemory(live, afterSeq));
          if (stillRunning.isPresent()) {
            follow(ctx, stillRunning.get(), afterSeq);
          } else if (progress.settled()) {
            ctx.response().setChunked(true).putHeader("X-Analysis-Id", id.toString());
            streams.pages(ctx, 200, EventStream.CONTENT_TYPE, new Replay(tenant, id, afterSeq)::next);
          } else {
            followStored(ctx, tenant, id, afterSeq);
          }
        })
        .onFailure(ctx::fail);
  }

  /**
   * Whether this replica holds every event of {@code live} after {@code afterSeq}: not when it took the
   * analysis over after them (those are in the store only).
   */
  private static boolean inMemory(LiveAnalysis live, long afterSeq) {
    return live.firstSeq() <= afterSeq + 1;
  }

  /** The most bytes of events one page of a replay reads (a page holds at least one event). */
  static final long REPLAY_PAGE_BYTES = 256 * 1024;

  /**
   * A finished analysis' stored events from {@code afterSeq} on, a page of at most {@value
   * #REPLAY_PAGE} events and {@value #REPLAY_PAGE_BYTES} bytes at a time, the next read only once the
   * client has taken the last ({@link ResponseStreams#pages}): a large record costs the gateway one
   * page of memory and never holds an event loop or a database connection for long.
   */
  private final class Replay {
    private final UUID tenant;
    private final UUID id;
    private long after;

    Replay(UUID tenant, UUID id, long afterSeq) {
      this.tenant = tenant;
      this.id = id;
      this.after = afterSeq;
    }

    Future<ResponseStreams.Piece> next() {
      return analyses.store().events(tenant, id, after, REPLAY_PAGE, REPLAY_PAGE_BYTES).map(page -> {
        StringBuilder sse = new StringBuilder();
        long bytes = 0;
        for (AnalysisEvent e : page) {
          sse.append(e.sse());
          bytes += utf8Length(e.json());
        }
        if (!page.isEmpty()) {
          after = page.get(page.size() - 1).seq();
        }
        // Not the last when the page was cut at the byte bound, which counts UTF-8 bytes as here.
        boolean last = page.size() < REPLAY_PAGE && bytes < REPLAY_PAGE_BYTES;
        return new ResponseStreams.Piece(io.vertx.core.buffer.Buffer.buffer(sse.toString()), last);
      });
    }
  }

  /** The bytes of {@code s} in UTF-8, as PostgreSQL's octet_length counts them. */
  static long utf8Length(String s) {
    long n = 0;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n += 1;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3;
      }
    }
    return n;
  }

  /**
   * Cancels a running analysis on whichever replica runs it: 202 once asked (it ends
   * {@code cancelled}, as its record and stream then say), 409 when it had already ended.
   */
  private void cancel(RoutingContext ctx) {
    UUID id = analysisId(ctx);
    analyses.cancel(ApiRoutes.tenant(ctx), id)
        .map(found -> found.orElseThrow(() -> missing(id)))
        .onSuccess(status -> {
          if (!"running".equals(status)) {
            ctx.fail(new ApiError(409, "not_running", "analysis " + id + " has already ended (" + status
                + "); there is nothing to cancel"));
            return;
          }
          ApiRoutes.replyJson(ctx, 202, new JsonObject().put("id", id.toString()).put("status", status)
              .put("cancel", "requested"));
        })
        .onFailure(ctx::fail);
  }

  private void replay(RoutingContext ctx) {
    UUID id = analysisId(ctx);
    analyses.replay(ApiRoutes.tenant(ctx), id)
        .map(found -> found.orElseThrow(() -> missing(id)))
        .onSuccess(result -> ApiRoutes.replyJson(ctx, 200, result))
        .onFailure(e -> ctx.fail(refusal(e)));
  }

  /**
   * The most streams that follow one analysis at once through {@code GET /v1/analyses/{id}/events},
   * on whichever replicas (besides the request that started it): each holds a connection, and
   * without a bound one tenant's followers of one analysis could take every connection the gateways
   * allow (red team R6-1). Counted in PostgreSQL as places under the analysis' name.
   */
  static final int MAX_FOLLOWERS = 8;

  /** A further stream of an analysis running here, unless it already has {@link #MAX_FOLLOWERS}. */
  private void follow(RoutingContext ctx, LiveAnalysis live, long afterSeq) {
    followerPlace(ctx, live.tenantId(), live.id(), release -> stream(ctx, live, false, afterSeq, release));
  }

  /** A further stream of an analysis running on another replica (or just ended), read from the store. */
  private void followStored(RoutingContext ctx, UUID tenant, UUID id, long afterSeq) {
    followerPlace(ctx, tenant, id, release -> new StoredFollow(ctx, analyses.store(), analyses.wakeups(), tenant, id,
        afterSeq, heartbeat, release).start());
  }

  /**
   * Takes a follower's place across the replicas, then runs {@code follow} with what gives it back;
   * 429 when {@link #MAX_FOLLOWERS} follow the analysis already.
   */
  private void followerPlace(RoutingContext ctx, UUID tenant, UUID id, java.util.function.Consumer<Runnable> follow) {
    analyses.followerPlace(tenant, id, MAX_FOLLOWERS).onComplete(ar -> {
      if (ar.failed()) {
        ctx.fail(ar.cause() instanceof dev.quarry.tenancy.Places.Full
            ? new ApiError(429, "too_many_followers", "analysis " + id + " already has " + MAX_FOLLOWERS
                + " event streams following it, the most one analysis may have; read its events from one"
                + " of them, or once it has finished")
            : ar.cause());
        return;
      }
      java.util.concurrent.atomic.AtomicBoolean held = new java.util.concurrent.atomic.AtomicBoolean(true);
      Runnable release = () -> {
        if (held.compareAndSet(true, false)) {
          ar.result().close();
        }
      };
      if (ctx.response().closed()) {
        release.run(); // the client went while the place was taken
        return;
      }
      follow.accept(release);
    });
  }

  /** The longest {@code Last-Event-ID} taken: an event's seq, a long. */
  private static final int LAST_EVENT_ID_DIGITS = 18;

  /**
   * The seq after which a stream of events starts: the {@code Last-Event-ID} header, which an
   * EventSource sends when it reconnects (an event's {@code id} is its seq); 0 without it.
   */
  static long lastEventId(RoutingContext ctx) {
    String raw = ctx.request().getHeader("Last-Event-ID");
    if (raw == null || raw.isBlank()) {
      return 0;
    }
    String v = raw.strip();
    if (v.length() > LAST_EVENT_ID_DIGITS || !v.chars().allMatch(c -> c >= '0' && c <= '9')) {
      throw ApiError.badRequest("invalid_last_event_id", "header Last-Event-ID = '"
          + (v.length() > 40 ? v.substring(0, 40) + "..." : v) + "' is not an event's id (its seq: a whole number from 0)");
    }
    return Long.parseLong(v);
  }

  private static UUID analysisId(RoutingContext ctx) {
    String raw = ctx.pathParam("id");
    try {
      return Requests.documentId(raw);
    } catch (ApiError e) {
      throw ApiError.badRequest("invalid_id", "analysis id '" + raw + "' is not a UUID");
    }
  }

  private static ApiError missing(UUID id) {
    return ApiError.notFound("no analysis with id " + id);
  }

  private static Throwable refusal(Throwable e) {
    return e instanceof AnalysisService.AnalysisRefused r ? ErrorMapping.refused(r) : e;
  }
}
