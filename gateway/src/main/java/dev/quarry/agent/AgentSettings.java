package dev.quarry.agent;

import dev.quarry.config.Records;
import dev.quarry.config.Settings;
import java.time.Duration;
import java.util.Map;

/**
 * How the gateway talks to the model and runs analyses, read once at start-up. The endpoint is any
 * OpenAI-compatible one: {@code QUARRY_MODEL_BASE_URL} / {@code QUARRY_MODEL_API_KEY}, else the
 * standard {@code OPENAI_BASE_URL} / {@code OPENAI_API_KEY}. Without a base URL analyses are refused
 * (with a message saying how to configure one) and everything else works.
 *
 * @param retryBase          first back-off after a 429 or 5xx; doubled per attempt, with jitter
 * @param retryMax           the cap of one back-off (a longer Retry-After gives up instead)
 * @param breakerThreshold   consecutive failed calls that open the circuit breaker
 * @param breakerCooldown    how long an open breaker fails calls at once before letting one through
 * @param maxCorrections     correction turns for a missing execution or a malformed final message
 * @param cancelOnDisconnect whether a streamed analysis whose client went away is cancelled (else
 *                           it runs to the end and stays available by id)
 * @param maxEvents          the most events one analysis records; a cell's output or callback past
 *                           it (or past {@code maxEventChars}) is not recorded and ends the analysis
 * @param maxEventChars      the most characters of events (their JSON) one analysis records
 */
public record AgentSettings(
    String baseUrl,
    String apiKey,
    String model,
    double temperature,
    Duration connectTimeout,
    Duration requestTimeout,
    int maxAttempts,
    Duration retryBase,
    Duration retryMax,
    int breakerThreshold,
    Duration breakerCooldown,
    int maxCorrections,
    int maxQuestionChars,
    boolean cancelOnDisconnect,
    Budgets defaultBudgets,
    Budgets maxBudgets,
    int maxEvents,
    long maxEventChars) {

  public static final int DEFAULT_MAX_EVENTS = 10_000;
  public static final long DEFAULT_MAX_EVENT_CHARS = 16_000_000;

  public static final String HOW_TO_CONFIGURE = "no model endpoint is configured: set OPENAI_BASE_URL"
      + " (or QUARRY_MODEL_BASE_URL) to an OpenAI-compatible endpoint such as https://api.openai.com/v1,"
      + " OPENAI_API_KEY if it needs one, and QUARRY_MODEL to the model's name, then restart the gateway";

  /** Every setting at its default: no model endpoint. */
  public static final AgentSettings DEFAULTS = fromEnv(Map.of());

  /** From one configuration map (the environment over the optional file, {@code ConfigSource}). */
  public static AgentSettings fromEnv(Map<String, String> values) {
    return read(new Settings(values));
  }

  public static AgentSettings read(Settings e) {
    Budgets max = new Budgets(
        e.integer("QUARRY_MAX_MODEL_TURNS", Budgets.MAXIMUMS.modelTurns(), 1, 1000),
        e.integer("QUARRY_MAX_ANALYSIS_MS", (int) Budgets.MAXIMUMS.wallTimeMs(), 1000, Integer.MAX_VALUE),
        e.integer("QUARRY_MAX_ANALYSIS_TOKENS", (int) Budgets.MAXIMUMS.tokens(), 100, Integer.MAX_VALUE),
        e.integer("QUARRY_MAX_EXECUTIONS", Budgets.MAXIMUMS.executions(), 1, 10_000),
        e.integer("QUARRY_MAX_SEARCH_CALLS", Budgets.MAXIMUMS.searchCalls(), 1, 100_000),
        e.integer("QUARRY_MAX_LLM_CALLS", Budgets.MAXIMUMS.llmCalls(), 1, 100_000),
        e.integer("QUARRY_MAX_LIST_DOCUMENTS_CALLS", Budgets.MAXIMUMS.listDocumentsCalls(), 1, 100_000));
    Budgets dflt = new Budgets(
        e.integerUpTo("QUARRY_MODEL_TURNS", Math.min(Budgets.DEFAULTS.modelTurns(), max.modelTurns()), 1, "QUARRY_MAX_MODEL_TURNS", max.modelTurns()),
        e.integerUpTo("QUARRY_ANALYSIS_MS", (int) Math.min(Budgets.DEFAULTS.wallTimeMs(), max.wallTimeMs()), 1000, "QUARRY_MAX_ANALYSIS_MS", (int) max.wallTimeMs()),
        e.integerUpTo("QUARRY_ANALYSIS_TOKENS", (int) Math.min(Budgets.DEFAULTS.tokens(), max.tokens()), 100, "QUARRY_MAX_ANALYSIS_TOKENS", (int) max.tokens()),
        e.integerUpTo("QUARRY_EXECUTIONS", Math.min(Budgets.DEFAULTS.executions(), max.executions()), 1, "QUARRY_MAX_EXECUTIONS", max.executions()),
        e.integerUpTo("QUARRY_SEARCH_CALLS", Math.min(Budgets.DEFAULTS.searchCalls(), max.searchCalls()), 1, "QUARRY_MAX_SEARCH_CALLS", max.searchCalls()),
        e.integerUpTo("QUARRY_LLM_CALLS", Math.min(Budgets.DEFAULTS.llmCalls(), max.llmCalls()), 1, "QUARRY_MAX_LLM_CALLS", max.llmCalls()),
        e.integerUpTo("QUARRY_LIST_DOCUMENTS_CALLS", Math.min(Budgets.DEFAULTS.listDocumentsCalls(), max.listDocumentsCalls()), 1, "QUARRY_MAX_LIST_DOCUMENTS_CALLS", max.listDocumentsCalls()));
    // QUARRY_MODEL_* win over the standard OPENAI_* names, which are the fallback.
    String openAiBase = e.string("OPENAI_BASE_URL", "");
    String openAiKey = e.secret("OPENAI_API_KEY", "");
    return new AgentSettings(
        e.string("QUARRY_MODEL_BASE_URL", openAiBase),
        e.secret("QUARRY_MODEL_API_KEY", openAiKey),
        e.string("QUARRY_MODEL", "gpt-4.1-mini"),
        e.decimal("QUARRY_MODEL_TEMPERATURE", 0.0, 0.0, 2.0),
        Duration.ofMillis(e.integer("QUARRY_MODEL_CONNECT_TIMEOUT_MS", 10_000, 100, 600_000)),
        Duration.ofMillis(e.integer("QUARRY_MODEL_TIMEOUT_MS", 120_000, 100, 3_600_000)),
        e.integer("QUARRY_MODEL_MAX_ATTEMPTS", 6, 1, 50),
        Duration.ofMillis(e.integer("QUARRY_MODEL_RETRY_BASE_MS", 500, 1, 600_000)),
        Duration.ofMillis(e.integer("QUARRY_MODEL_RETRY_MAX_MS", 30_000, 1, 3_600_000)),
        e.integer("QUARRY_MODEL_BREAKER_THRESHOLD", 8, 1, 1000),
        Duration.ofMillis(e.integer("QUARRY_MODEL_BREAKER_COOLDOWN_MS", 30_000, 1, 3_600_000)),
        e.integer("QUARRY_ANALYSIS_CORRECTIONS", 2, 0, 20),
        e.integer("QUARRY_MAX_QUESTION_CHARS", 8_000, 10, 1_000_000),
        e.oneOf("QUARRY_ANALYSIS_ON_DISCONNECT", "finish", "finish", "cancel").equals("cancel"),
        dflt,
        max,
        e.integer("QUARRY_ANALYSIS_MAX_EVENTS", DEFAULT_MAX_EVENTS, 100, 1_000_000),
        e.integer("QUARRY_ANALYSIS_MAX_EVENT_CHARS", (int) DEFAULT_MAX_EVENT_CHARS, 100_000, Integer.MAX_VALUE));
  }

  public boolean modelConfigured() {
    return !baseUrl.isBlank();
  }

  public AgentSettings withEndpoint(String url, String key, String modelName) {
    return Records.with(this, Map.of("baseUrl", url, "apiKey", key, "model", modelName));
  }

  public AgentSettings withRetries(int attempts, Duration base, Duration max, int threshold, Duration cooldown) {
    return Records.with(this, Map.of("maxAttempts", attempts, "retryBase", base, "retryMax", max,
        "breakerThreshold", threshold, "breakerCooldown", cooldown));
  }

  public AgentSettings withEventCaps(int events, long chars) {
    return Records.with(this, Map.of("maxEvents", events, "maxEventChars", chars));
  }

  public AgentSettings withCancelOnDisconnect(boolean cancel) {
    return Records.with(this, "cancelOnDisconnect", cancel);
  }
}
