package dev.quarry.agent;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static org.assertj.core.api.Assertions.assertThat;

import dev.quarry.sandbox.CallbackArguments;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * What an analysis records and spends for its code's callbacks (red team round 5: R5-1, R5-8), with
 * real sandboxes, PostgreSQL and the scripted model; the caps on events are set low so that a test
 * reaches them in a second.
 */
@DisplayName("An analysis' callbacks: bounded records, budgets for every kind, tokens within llm()")
class CallbackRecordsTest {
  static final int MAX_EVENTS = 300;
  static AgentHarness h;

  @BeforeAll
  static void start() throws Exception {
    h = new AgentHarness(dev.quarry.sandbox.RunnerImage.ensure(), a -> a.withEventCaps(MAX_EVENTS, 2_000_000));
    h.ingest("docling/html/wiki_duck.html");
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
  }

  @AfterEach
  void nothingLeft() throws Exception {
    int unused = h.model.remaining();
    h.model.reset();
    assertThat(unused).as("scripted turns left unused").isZero();
    h.assertNoSandboxes();
  }

  private static JsonObject ask(JsonObject body) {
    var r = h.post("/v1/analyses", body);
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
    return r.bodyAsJsonObject();
  }

  /** The stored events as GET /v1/analyses/{id}/events replays them, and the size of that replay. */
  private static List<JsonObject> replay(String id, int[] chars) {
    var r = h.get("/v1/analyses/" + id + "/events");
    assertThat(r.statusCode()).isEqualTo(200);
    String body = r.bodyAsString();
    chars[0] = body.length();
    return AgentHarness.events(body);
  }

  private static String stdout(JsonObject analysis) {
    return analysis.getJsonArray("steps").getJsonObject(0).getJsonObject("result").getString("stdout");
  }

  @Test
  @DisplayName("R5-1: huge refused calls are recorded as short previews, and calls past their budget only counted")
  void refusedCallsAreRecordedCompactly() {
    h.model.then(execute("""
        q = 'a ' * 100000
        refused = 0
        limited = 0
        for i in range(40):
            try:
                await search(q)
            except ValueError:
                refused += 1
            except LimitExceeded:
                limited += 1
        print(refused, limited)
        """), answer("none", "print(1)"));
    JsonObject analysis = ask(new JsonObject().put("question", "Search with a huge query?")
        .put("budgets", new JsonObject().put("search_calls", 10)));
    assertThat(analysis.getString("status")).as(analysis.encodePrettily()).isEqualTo("succeeded");
    assertThat(stdout(analysis)).isEqualTo("10 30\n");
    JsonObject usage = analysis.getJsonObject("usage");
    assertThat(usage.getInteger("search_calls")).isEqualTo(10);
    assertThat(usage.getLong("unrecorded_callbacks")).isEqualTo(30);

    int[] chars = new int[1];
    List<JsonObject> callbacks = replay(analysis.getString("id"), chars).stream()
        .filter(e -> e.getString("type").equals("callback")).toList();
    assertThat(callbacks).hasSize(10);
    for (JsonObject e : callbacks) {
      assertThat(e.getJsonObject("arguments").getString("query")).hasSize(CallbackArguments.VALUE_CHARS);
      assertThat(e.getInteger("arguments_chars")).isGreaterThan(200_000);
      assertThat(e.getBoolean("arguments_cut")).isTrue();
    }
    // Before: 40 events of 200,000 characters each (8 MB) for this one cell.
    assertThat(chars[0]).as("characters of the whole replayed record").isLessThan(30_000);
  }

  @Test
  @DisplayName("R5-1: list_documents has a budget of its own (budgets.list_documents_calls); calls past it raise LimitExceeded")
  void listDocumentsHasABudget() {
    h.model.then(execute("""
        ok = 0
        why = ''
        for i in range(8):
            try:
                await list_documents()
                ok += 1
            except LimitExceeded as e:
                why = str(e)
        print(ok, why)
        """), answer("none", "print(1)"));
    JsonObject analysis = ask(new JsonObject().put("question", "List the documents eight times?")
        .put("budgets", new JsonObject().put("list_documents_calls", 3)));
    assertThat(analysis.getString("status")).as(analysis.encodePrettily()).isEqualTo("succeeded");
    assertThat(stdout(analysis)).startsWith("3 ").contains("3 list_documents() calls (budgets.list_documents_calls)");
    assertThat(analysis.getJsonObject("usage").getInteger("list_documents_calls")).isEqualTo(3);
    assertThat(analysis.getJsonObject("usage").getLong("unrecorded_callbacks")).isEqualTo(5);
  }

  @Test
  @DisplayName("R5-1: a cell past the caps on events is stopped and the analysis ends budget_exhausted; the record stays within the caps and replays whole, a page at a time")
  void eventsAreCapped() {
    h.model.then(execute("""
        q = 'b ' * 2500
        for i in range(2000):
            try:
                await search(q)
            except ValueError:
                pass
        print('never cut')
        """));
    JsonObject analysis = ask(new JsonObject().put("question", "Flood the record?")
        .put("budgets", new JsonObject().put("search_calls", 500)));
    assertThat(analysis.getString("status")).as(analysis.encodePrettily()).isEqualTo("budget_exhausted");
    assertThat(analysis.getJsonObject("error").getString("message"))
        .startsWith("events:").contains("QUARRY_ANALYSIS_MAX_EVENTS");
    assertThat(stdout(analysis)).doesNotContain("never cut");

    int[] chars = new int[1];
    List<JsonObject> events = replay(analysis.getString("id"), chars);
    // The cell's callbacks up to the cap, then the cell's result and the terminal event.
    assertThat(events.size()).isBetween(MAX_EVENTS - 10, MAX_EVENTS + 3);
    assertThat(events.size()).as("more than one page of the replay").isGreaterThan(200);
    for (int i = 0; i < events.size(); i++) {
      assertThat(events.get(i).getLong("seq")).isEqualTo(i + 1L);
    }
    assertThat(events.get(events.size() - 1).getString("type")).isEqualTo("failed");
  }

  @Test
  @DisplayName("R5-8: llm() is refused once the analysis' tokens are spent, a prompt that cannot fit is refused, and each call is bounded by max_completion_tokens")
  void llmStaysWithinTheTokenBudget() {
    // The scripted model reports 100 prompt + 20 completion tokens for every call, the turn included.
    h.model.then(execute("""
        try:
            await llm('x ' * 5000)
            big = 'served'
        except LimitExceeded as e:
            big = str(e)
        ok = 0
        limited = []
        for i in range(10):
            try:
                await llm('hello')
                ok += 1
            except LimitExceeded as e:
                limited.append(str(e))
        print(ok, len(limited))
        print(big)
        print(limited[0])
        """));
    JsonObject analysis = ask(new JsonObject().put("question", "Ask the model ten times?")
        .put("budgets", new JsonObject().put("tokens", 500)));
    assertThat(analysis.getString("status")).as(analysis.encodePrettily()).isEqualTo("budget_exhausted");
    String[] lines = stdout(analysis).split("\n");
    // 120 for the turn, then 4 calls of 120 (the fourth starts with 20 left), then refusals.
    assertThat(lines[0]).isEqualTo("4 6");
    assertThat(lines[1]).contains("does not fit").contains("budgets.tokens");
    assertThat(lines[2]).contains("has used its tokens").contains("budgets.tokens");
    assertThat(analysis.getJsonObject("usage").getLong("total_tokens")).isEqualTo(600);
    List<JsonObject> llm = h.model.llmRequests();
    assertThat(llm).hasSize(4);
    // Half of 500 - 120 used - 2 estimated for the prompt 'hello'; the fourth: half of 20 - 2.
    assertThat(llm.get(0).getLong("max_completion_tokens")).isEqualTo(189L);
    assertThat(llm.get(3).getLong("max_completion_tokens")).isEqualTo(9L);
  }
}
