package dev.quarry.agent;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.RequestOptions;
import com.openai.core.Timeout;
import com.openai.core.http.Headers;
import com.openai.errors.OpenAIException;
import com.openai.errors.OpenAIIoException;
import com.openai.errors.OpenAIServiceException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionMessageParam;
import dev.quarry.callbacks.Llm;
import dev.quarry.sandbox.CallbackFailure;
import dev.quarry.telemetry.QuarryMetrics;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;
import okhttp3.OkHttpClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The model, through the official openai-java client, against any OpenAI-compatible endpoint.
 * Every method blocks: call it from a virtual thread or a worker, never from an event loop.
 *
 * <p>The client's own retries are off: this class retries 429 and 5xx (and connection failures)
 * itself, with capped exponential back-off and jitter, honouring Retry-After, and never past the
 * caller's deadline; {@code insufficient_quota} and other 4xx fail at once. A circuit breaker shared
 * by all analyses stops calls to an endpoint that keeps failing.
 */
public final class ModelClient implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ModelClient.class);

  private final AgentSettings settings;
  private final OpenAIClient client;
  /** The HTTP client under {@link #client}: openai-java borrows it and leaves closing it to us. */
  private final OkHttpClient http;
  private final CircuitBreaker breaker;
  private final Clock clock;
  private final QuarryMetrics metrics;
  /**
   * An attempt bounded by its caller's deadline that failed within this of it was cut by that
   * deadline, not failed by the endpoint.
   */
  static final Duration DEADLINE_SLACK = Duration.ofMillis(100);

  public ModelClient(AgentSettings settings) {
    this(settings, new QuarryMetrics());
  }

  public ModelClient(AgentSettings settings, QuarryMetrics metrics) {
    this(settings, Clock.systemUTC(), metrics);
  }

  ModelClient(AgentSettings settings, Clock clock) {
    this(settings, clock, new QuarryMetrics());
  }

  private ModelClient(AgentSettings settings, Clock clock, QuarryMetrics metrics) {
    this.settings = settings;
    this.metrics = metrics;
    this.clock = clock;
    this.breaker = new CircuitBreaker(settings.breakerThreshold(), settings.breakerCooldown(), clock);
    this.http = settings.modelConfigured() ? httpClient(settings) : null;
    this.client = settings.modelConfigured()
        ? OpenAIOkHttpClient.builder()
            .okHttpClient(http)
            .baseUrl(settings.baseUrl())
            // Local servers (vLLM, Ollama, llama.cpp) take any key; the client insists on one.
            .apiKey(settings.apiKey().isBlank() ? "unused" : settings.apiKey())
            .maxRetries(0)
            .build()
        : null;
  }

  /**
   * The HTTP client openai-java would build for itself (the same timeouts, no redirects) but on
   * sockets without Nagle's algorithm. openai-java adds its own safeguards (no retry on a failed
   * connection, the API key never sent on to another host) to the client it borrows.
   */
  static OkHttpClient httpClient(AgentSettings settings) {
    return new OkHttpClient.Builder()
        .socketFactory(new NoDelaySocketFactory())
        .connectTimeout(settings.connectTimeout())
        .readTimeout(settings.requestTimeout())
        .writeTimeout(settings.requestTimeout())
        .callTimeout(settings.requestTimeout())
        .followRedirects(false)
        .followSslRedirects(false)
        .build();
  }

  public boolean configured() {
    return client != null;
  }

  public String model() {
    return settings.model();
  }

  /** One reply of the model to a conversation, with the tools it may call. */
  public ChatCompletion chat(List<ChatCompletionMessageParam> messages, List<ChatCompletionFunctionTool> tools,
      Instant deadline) {
    ChatCompletionCreateParams.Builder params = ChatCompletionCreateParams.builder()
        .model(settings.model())
        .temperature(settings.temperature())
        .messages(messages);
    tools.forEach(params::addTool);
    ChatCompletionCreateParams built = params.build();
    return measured("agent", options -> client.chat().completions().create(built, options), deadline);
  }

  /** A plain completion of one prompt (the sandbox's {@code llm()}). */
  public Completion complete(String prompt, Instant deadline) {
    return complete(prompt, deadline, 0);
  }

  /** As {@link #complete(String, Instant)}, with {@code max_completion_tokens} when it is above 0. */
  public Completion complete(String prompt, Instant deadline, long maxCompletionTokens) {
    ChatCompletionCreateParams.Builder builder = ChatCompletionCreateParams.builder()
        .model(settings.model())
        .temperature(settings.temperature())
        .addUserMessage(prompt);
    if (maxCompletionTokens > 0) {
      builder.maxCompletionTokens(maxCompletionTokens);
    }
    ChatCompletionCreateParams params = builder.build();
    ChatCompletion reply = measured("llm", options -> client.chat().completions().create(params, options), deadline);
    String text = reply.choices().isEmpty() ? "" : reply.choices().get(0).message().content().orElse("");
    return new Completion(text, usage(reply));
  }

  public record Completion(String text, Usage usage) {}

  /**
   * This client as the model behind a sandbox's llm(), for callers on an event loop: each call runs
   * {@link #complete} on a virtual thread of its own, by the caller's deadline or within one request
   * timeout, whichever is sooner. A model failure reaches the code worded with its type.
   */
  public Llm asLlm() {
    return new Llm() {
      @Override
      public Future<Llm.Reply> complete(String prompt, Instant deadline) {
        return complete(prompt, deadline, 0);
      }

      @Override
      public Future<Llm.Reply> complete(String prompt, Instant deadline, long maxCompletionTokens) {
        return completeAsync(prompt, deadline, maxCompletionTokens);
      }
    };
  }

  private Future<Llm.Reply> completeAsync(String prompt, Instant deadline, long maxCompletionTokens) {
    Promise<Llm.Reply> promise = Promise.promise();
    Thread.ofVirtual().name("llm").start(() -> {
      try {
        Instant own = clock.instant().plus(settings.requestTimeout());
        Completion c = complete(prompt, deadline.isBefore(own) ? deadline : own, maxCompletionTokens);
        promise.complete(new Llm.Reply(c.text(), c.usage().promptTokens(), c.usage().completionTokens()));
      } catch (ModelFailure f) {
        promise.fail(CallbackFailure.runtimeError("llm() failed: " + f.type() + ": " + f.getMessage()));
      } catch (Throwable e) { // an Error too: the call must end, or its callback's places are never given back
        promise.fail(e);
      }
    });
    return promise.future();
  }

  static Usage usage(ChatCompletion reply) {
    return reply.usage().map(u -> new Usage(u.promptTokens(), u.completionTokens())).orElse(Usage.NONE);
  }

  /** {@link #call} with its duration, tokens and failure kind recorded under the purpose (agent, llm). */
  private ChatCompletion measured(String purpose, Function<RequestOptions, ChatCompletion> request,
      Instant deadline) {
    long started = System.nanoTime();
    try {
      ChatCompletion reply = call(request, deadline);
      Usage usage = usage(reply);
      metrics.modelCall(purpose, Duration.ofNanos(System.nanoTime() - started), usage.promptTokens(),
          usage.completionTokens());
      return reply;
    } catch (ModelFailure e) {
      metrics.modelError(purpose, errorKind(e), Duration.ofNanos(System.nanoTime() - started));
      throw e;
    } catch (RuntimeException e) {
      metrics.modelError(purpose, "internal", Duration.ofNanos(System.nanoTime() - started));
      throw e;
    }
  }

  /** The kind label of quarry_model_errors: the failure's type, with an unreachable endpoint told from a failing one. */
  private static String errorKind(ModelFailure e) {
    return switch (e.type()) {
      case "RateLimited" -> "rate_limited";
      case "QuotaExceeded" -> "quota_exceeded";
      case "ModelUnavailable" -> e.getMessage().startsWith("the model endpoint could not be reached")
          ? "connection" : e.getMessage().equals(AgentSettings.HOW_TO_CONFIGURE) ? "unconfigured" : "server_error";
      case "ModelRejected" -> e.getMessage().startsWith("the model endpoint's reply") ? "bad_response" : "client_error";
      case "OutOfTime" -> "timeout";
      case "Cancelled" -> "cancelled";
      default -> "other";
    };
  }

  private static String retryKind(RetryableFailure f) {
    return switch (f.type()) {
      case "RateLimited" -> "rate_limited";
      case "ModelUnavailable" -> f.message().startsWith("the model endpoint could not be reached")
          ? "connection" : "server_error";
      default -> "other";
    };
  }

  private <T> T call(Function<RequestOptions, T> request, Instant deadline) {
    if (client == null) {
      throw new ModelFailure("ModelUnavailable", AgentSettings.HOW_TO_CONFIGURE);
    }
    for (int attempt = 1; ; attempt++) {
      timeLeft(deadline);
      CircuitBreaker.Permit permit = awaitBreaker(deadline);
      Duration left;
      try {
        // Measured again: the wait for the breaker took part of it.
        left = timeLeft(deadline);
      } catch (ModelFailure outOfTime) {
        permit.released();
        throw outOfTime;
      }
      // Bounded by the caller's deadline rather than by the model's own request timeout?
      boolean callerBound = left.compareTo(settings.requestTimeout()) < 0;
      Duration timeout = callerBound ? left : settings.requestTimeout();
      long sent = System.nanoTime();
      RetryableFailure failure;
      try {
        T result = request.apply(RequestOptions.builder()
            .timeout(Timeout.builder().connect(settings.connectTimeout()).request(timeout).build()).build());
        permit.succeeded();
        return result;
      } catch (OpenAIServiceException e) {
        failure = classify(e, permit);
      } catch (OpenAIIoException e) {
        // A call cut by its own caller (cancelled, or its deadline reached) says nothing about the
        // endpoint: counting it would let any tenant open the breaker all tenants share with short
        // deadlines (R6-3). Only a failure with time left on the caller's clock counts.
        if (Thread.currentThread().isInterrupted()) {
          permit.released();
          throw new ModelFailure("Cancelled", "the analysis was cancelled while waiting for the model");
        }
        if (callerBound && System.nanoTime() - sent >= timeout.minus(DEADLINE_SLACK).toNanos()) {
          permit.released();
          throw new ModelFailure("OutOfTime", "the analysis' time budget ran out while waiting for the model");
        }
        permit.failed();
        failure = new RetryableFailure("ModelUnavailable",
            "the model endpoint could not be reached: " + rootMessage(e), Optional.empty());
      } catch (OpenAIException e) {
        permit.released();
        throw new ModelFailure("ModelRejected", "the model endpoint's reply could not be read: " + rootMessage(e));
      } catch (Throwable e) { // an Error too: a half-open trial never released would pause the endpoint for good
        permit.released();
        throw e;
      }
      if (attempt >= settings.maxAttempts()) {
        throw new ModelFailure(failure.type(), failure.message() + " (gave up after " + attempt + " attempts)");
      }
      Duration delay = failure.retryAfter().orElse(jittered(backoff(attempt)));
      if (clock.instant().plus(delay).isAfter(deadline)) {
        throw new ModelFailure(failure.type(), failure.message() + " (the next attempt, in "
            + delay.toMillis() + " ms, would be past the analysis' time budget)");
      }
      log.info("model call failed ({}), attempt {} of {}; retrying in {} ms", failure.message(), attempt,
          settings.maxAttempts(), delay.toMillis());
      metrics.modelRetry(retryKind(failure));
      try {
        Thread.sleep(delay);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ModelFailure("Cancelled", "the analysis was cancelled while waiting to retry the model");
      }
    }
  }

  /** The time before the deadline; OutOfTime when there is none. */
  private Duration timeLeft(Instant deadline) {
    Duration left = Duration.between(clock.instant(), deadline);
    if (left.isNegative() || left.isZero()) {
      throw new ModelFailure("OutOfTime", "the analysis' time budget ran out while waiting for the model");
    }
    return left;
  }

  /**
   * Waits while the breaker is open (or another call is its trial), as long as the analysis' time
   * budget leaves room for the call after it: a short outage then costs the analyses time, not their
   * answers, while the endpoint sees one trial call instead of every analysis' retries.
   */
  private CircuitBreaker.Permit awaitBreaker(Instant deadline) {
    for (CircuitBreaker.Admission a = breaker.tryAcquire(); ; a = breaker.tryAcquire()) {
      if (a.permit() != null) {
        return a.permit();
      }
      Duration wait = a.retryIn();
      if (clock.instant().plus(wait).isAfter(deadline)) {
        throw breaker.paused(wait);
      }
      try {
        Thread.sleep(wait);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new ModelFailure("Cancelled", "the analysis was cancelled while the model endpoint was paused");
      }
    }
  }

  private record RetryableFailure(String type, String message, Optional<Duration> retryAfter) {}

  /** Throws for what is not worth retrying; counts server failures against the breaker. */
  private RetryableFailure classify(OpenAIServiceException e, CircuitBreaker.Permit permit) {
    int status = e.statusCode();
    String detail = "HTTP " + status + errorDetail(e);
    if (status == 429) {
      if (isQuota(e)) {
        permit.released();
        throw new ModelFailure("QuotaExceeded", "the model endpoint says the account is out of quota ("
            + detail + "); add credit or use another key");
      }
      // A rate limit means the endpoint is alive: it does not count towards the breaker.
      permit.released();
      return new RetryableFailure("RateLimited", "the model endpoint is rate limiting (" + detail + ")",
          retryAfter(e.headers()));
    }
    if (status >= 500 || status == 408) {
      permit.failed();
      return new RetryableFailure("ModelUnavailable", "the model endpoint failed (" + detail + ")",
          retryAfter(e.headers()));
    }
    permit.released();
    throw new ModelFailure("ModelRejected", "the model endpoint refused the request (" + detail + ")");
  }

  private static boolean isQuota(OpenAIServiceException e) {
    return e.code().filter("insufficient_quota"::equals).isPresent()
        || e.type().filter("insufficient_quota"::equals).isPresent()
        || String.valueOf(e.body()).contains("insufficient_quota");
  }

  private static String errorDetail(OpenAIServiceException e) {
    String message = e.getMessage() == null ? "" : e.getMessage();
    return message.isBlank() ? "" : ": " + (message.length() > 300 ? message.substring(0, 300) + "…" : message);
  }

  /** Retry-After as OpenAI sends it: {@code retry-after-ms}, or {@code retry-after} in seconds or as a date. */
  Optional<Duration> retryAfter(Headers headers) {
    List<String> ms = headers.values("retry-after-ms");
    if (!ms.isEmpty()) {
      try {
        return Optional.of(Duration.ofMillis(Math.max(0, (long) Double.parseDouble(ms.get(0).trim()))));
      } catch (NumberFormatException ignored) {
        // fall through to retry-after
      }
    }
    List<String> values = headers.values("retry-after");
    if (values.isEmpty()) {
      return Optional.empty();
    }
    String v = values.get(0).trim();
    try {
      return Optional.of(Duration.ofMillis(Math.max(0, (long) (Double.parseDouble(v) * 1000))));
    } catch (NumberFormatException notSeconds) {
      try {
        ZonedDateTime at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME.withLocale(Locale.ROOT));
        Duration d = Duration.between(clock.instant(), at.toInstant());
        return Optional.of(d.isNegative() ? Duration.ZERO : d);
      } catch (RuntimeException notADate) {
        return Optional.empty();
      }
    }
  }

  /** base x 2^(attempt-1), capped. */
  Duration backoff(int attempt) {
    long base = settings.retryBase().toMillis();
    long cap = settings.retryMax().toMillis();
    long exp = attempt >= 30 ? cap : Math.min(cap, base << (attempt - 1));
    return Duration.ofMillis(exp);
  }

  /** Half fixed, half random, so that analyses failing together do not retry together. */
  private static Duration jittered(Duration d) {
    long ms = d.toMillis();
    return Duration.ofMillis(ms / 2 + ThreadLocalRandom.current().nextLong(ms / 2 + 1));
  }

  private static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String m = root.getMessage();
    return root.getClass().getSimpleName() + (m == null ? "" : ": " + m);
  }

  CircuitBreaker.State breakerState() {
    return breaker.state();
  }

  @Override
  public void close() {
    if (client != null) {
      client.close();
      http.dispatcher().executorService().shutdown();
      http.connectionPool().evictAll();
    }
  }
}
