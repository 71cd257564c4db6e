package dev.quarry.agent;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
import static dev.quarry.agent.ScriptedModelServer.message;
import static dev.quarry.agent.ScriptedModelServer.rateLimited;
import static dev.quarry.agent.ScriptedModelServer.status;
import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("An analysis, end to end (scripted model over HTTP, real PostgreSQL, real sandboxes)")
class AnalysisEndToEndTest {
  static AgentHarness h;
  static UUID duck;
  static UUID word;

  @BeforeAll
  static void start() throws Exception {
    h = new AgentHarness(false);
    duck = h.ingest("docling/html/wiki_duck.html");
    word = h.ingest("docling/docx/word_sample.docx");
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

  private static JsonObject ask(String question) {
    return ask(new JsonObject().put("question", question));
  }

  private static JsonObject ask(JsonObject body) {
    var r = h.post("/v1/analyses", body);
    assertThat(r.statusCode()).as(r.bodyAsString()).isEqualTo(200);
    return r.bodyAsJsonObject();
  }

  private static JsonObject lastRequest() {
    List<JsonObject> requests = h.model.requests();
    return requests.get(requests.size() - 1);
  }

  /** The tables of a document and the rows of its first table, straight from the items API. */
  private static int[] tablesAndRows(UUID doc) {
    String jsonl = h.get("/v1/documents/" + doc + "/items").bodyAsString();
    List<JsonObject> tables = jsonl.lines().map(JsonObject::new).filter(i -> "table".equals(i.getString("label"))).toList();
    int rows = (int) tables.get(0).getString("text").lines().filter(l -> l.startsWith("|")).count();
    return new int[] {tables.size(), rows};
  }

  @Test
  @DisplayName("a multi-cell analysis finds a document, counts its tables and rows, and answers with citations;"
      + " the live stream equals the replayed one; the program replays")
  void multiCell() throws Exception {
    String countCode = """
        import json
        from pathlib import Path
        items = [json.loads(l) for l in Path('/documents/%s/items.jsonl').read_text().splitlines()]
        tables = [i for i in items if i['label'] == 'table']
        rows = [r for r in tables[0]['text'].splitlines() if r.startswith('|')]
        print(len(tables), len(rows))
        """.formatted(duck);
    h.model.then(
        execute("docs = await list_documents()\nhits = await search('duck', limit=3)\nprint(len(docs))\n"
            + "hits[0]['document_id']"),
        execute(countCode),
        new ScriptedModelServer.Dynamic(request -> {
          List<JsonObject> results = ScriptedModelServer.toolResults(request);
          String counted = results.get(results.size() - 1).getString("stdout").trim();
          return answer("tables and rows: " + counted, countCode);
        }));
    String live = h.streamText("POST", "/v1/analyses",
        new JsonObject().put("question", "How many tables does the duck article have, and rows in the first?")
            .put("stream", true));
    List<JsonObject> events = AgentHarness.events(live);
    UUID id = UUID.fromString(events.get(0).getString("analysis_id"));

    int[] expected = tablesAndRows(duck);
    JsonObject analysis = h.get("/v1/analyses/" + id).bodyAsJsonObject();
    assertThat(analysis.getString("status")).isEqualTo("succeeded");
    assertThat(analysis.getString("answer")).as(analysis.getJsonArray("steps").encodePrettily())
        .isEqualTo("tables and rows: " + expected[0] + " " + expected[1]);
    assertThat(analysis.getString("program")).contains("items.jsonl");
    assertThat(analysis.getJsonArray("steps")).hasSize(2);
    JsonObject first = analysis.getJsonArray("steps").getJsonObject(0).getJsonObject("result");
    assertThat(first.getBoolean("success")).isTrue();
    assertThat(first.getString("stdout")).contains("2\n").contains(duck.toString());
    assertThat(analysis.getJsonObject("usage").getInteger("execute_code_calls")).isEqualTo(2);
    assertThat(analysis.getJsonObject("usage").getInteger("search_calls")).isEqualTo(1);
    assertThat(analysis.getJsonObject("usage").getInteger("model_turns")).isEqualTo(3);
    assertThat(analysis.getJsonObject("usage").getLong("total_tokens")).isEqualTo(360);
    assertThat(analysis.getString("model")).isEqualTo("scripted-model");

    JsonObject cited = analysis.getJsonArray("citations").stream().map(JsonObject.class::cast)
        .filter(c -> c.getString("document_id").equals(duck.toString())).findFirst().orElseThrow();
    assertThat(cited.getString("title")).isNotBlank();
    assertThat(cited.getString("uri")).isEqualTo("docling/html/wiki_duck.html");
    assertThat(cited.getJsonArray("via").getList()).containsExactly("file", "search");

    assertThat(events.get(0).getString("type")).isEqualTo("started");
    assertThat(events.stream().map(e -> e.getString("type")))
        .contains("model_turn", "code", "callback", "output", "cell_result")
        .filteredOn(t -> t.equals("answer") || t.equals("failed")).containsExactly("answer");
    assertThat(events.get(events.size() - 1).getString("type")).isEqualTo("answer");
    assertThat(events.stream().filter(e -> "callback".equals(e.getString("type"))).map(e -> e.getString("kind")))
        .containsExactly("list_documents", "search");
    assertThat(events).extracting(e -> e.getLong("seq")).isSorted().doesNotHaveDuplicates();

    String replayed = h.streamText("GET", "/v1/analyses/" + id + "/events", null);
    assertThat(replayed).isEqualTo(live);

    JsonArray firstMessages = h.model.requests().get(0).getJsonArray("messages");
    assertThat(firstMessages.getJsonObject(0).getString("role")).isEqualTo("system");
    assertThat(firstMessages.getJsonObject(0).getString("content")).isEqualTo(SystemPrompt.TEXT);

    JsonObject replay = h.post("/v1/analyses/" + id + "/replay", new JsonObject()).bodyAsJsonObject();
    assertThat(replay.getJsonObject("replay").getString("stdout").trim()).isEqualTo(expected[0] + " " + expected[1]);
    assertThat(replay.getJsonObject("replay").getString("baseline")).isEqualTo("recorded");
    JsonObject again = h.post("/v1/analyses/" + id + "/replay", new JsonObject()).bodyAsJsonObject();
    assertThat(again.getJsonObject("replay").getBoolean("matches")).isTrue();
    assertThat(again.getJsonArray("documents_changed")).isEmpty();
  }

  @Test
  @DisplayName("a cell that prints a NUL character, and an answer that holds one, are stored (shown as U+2400), not lost")
  void nulCharactersStored() {
    h.model.then(execute("print('a' + chr(0) + 'b')"), answer("nul\u0000here", "print('a' + chr(0) + 'b')"));
    JsonObject analysis = ask("Can a NUL be stored?");
    assertThat(analysis.getString("status")).as(analysis.encode()).isEqualTo("succeeded");
    String id = analysis.getString("id");
    JsonObject stored = h.get("/v1/analyses/" + id).bodyAsJsonObject();
    assertThat(stored.getString("status")).isEqualTo("succeeded");
    assertThat(stored.getString("answer")).isEqualTo("nul\u2400here");
    assertThat(stored.getJsonArray("steps").getJsonObject(0).getJsonObject("result").getString("stdout"))
        .isEqualTo("a\u2400b\n");
  }

  @Test
  @DisplayName("a syntax error goes back to the model, which fixes it in the next turn")
  void syntaxErrorFixed() {
    h.model.then(execute("print('unclosed'"), execute("print('fixed')"), answer("fixed", "print('fixed')"));
    JsonObject analysis = ask("Does a syntax error stop the analysis?");
    assertThat(analysis.getString("status")).isEqualTo("succeeded");
    JsonArray steps = analysis.getJsonArray("steps");
    JsonObject broken = steps.getJsonObject(0).getJsonObject("result");
    assertThat(broken.getBoolean("success")).isFalse();
    assertThat(broken.getJsonObject("error").getString("type")).isEqualTo("SyntaxError");
    List<JsonObject> sentBack = ScriptedModelServer.toolResults(h.model.requests().get(1));
    assertThat(sentBack.get(0).getJsonObject("error").getString("type")).isEqualTo("SyntaxError");
    assertThat(sentBack.get(0).fieldNames())
        .containsExactlyInAnyOrder("success", "stdout", "stderr", "error", "truncated", "duration_ms");
    assertThat(steps.getJsonObject(1).getJsonObject("result").getString("stdout")).isEqualTo("fixed\n");
  }

  @Test
  @DisplayName("an answer without any execution is sent back with a correction, not accepted")
  void answerWithoutExecution() {
    h.model.then(answer("42", "print(42)"), execute("6 * 7"), answer("42", "print(6 * 7)"));
    JsonObject analysis = ask("What is six times seven?");
    assertThat(analysis.getString("status")).isEqualTo("succeeded");
    JsonArray second = h.model.requests().get(1).getJsonArray("messages");
    JsonObject correction = second.getJsonObject(second.size() - 1);
    assertThat(correction.getString("role")).isEqualTo("user");
    assertThat(correction.getString("content")).isEqualTo(Conversation.NO_EXECUTION_CORRECTION);
    assertThat(analysis.getJsonObject("usage").getInteger("corrections")).isEqualTo(1);
  }

  @Test
  @DisplayName("a model that never executes fails with NoExecution after the bounded corrections")
  void neverExecutes() {
    h.model.then(answer("a", "p"), answer("a", "p"), answer("a", "p"));
    JsonObject analysis = ask("Will you run code?");
    assertThat(analysis.getString("status")).isEqualTo("failed");
    assertThat(analysis.getJsonObject("error").getString("type")).isEqualTo("NoExecution");
    assertThat(analysis.getString("answer")).isNull();
  }

  @Test
  @DisplayName("malformed final JSON gets a correction turn, then the well-formed answer is taken")
  void malformedFinalJson() {
    h.model.then(execute("6 * 7"), message("The answer is 42."), message("{\"answer\": \"42\"}"),
        answer("42", "print(6 * 7)"));
    JsonObject analysis = ask("What is six times seven?");
    assertThat(analysis.getString("status")).isEqualTo("succeeded");
    assertThat(analysis.getString("answer")).isEqualTo("42");
    List<JsonObject> requests = h.model.requests();
    JsonArray third = requests.get(requests.size() - 2).getJsonArray("messages");
    assertThat(third.getJsonObject(third.size() - 1).getString("content")).contains("not a JSON object");
    JsonArray fourth = lastRequest().getJsonArray("messages");
    assertThat(fourth.getJsonObject(fourth.size() - 1).getString("content")).contains("\"program\"");
  }

  @Test
  @DisplayName("running out of execute_code calls ends the analysis as budget_exhausted, keeping its steps")
  void executionBudget() {
    h.model.then(execute("a = 1"), execute("b = 2"), execute("c = 3"));
    JsonObject analysis = ask(new JsonObject().put("question", "Loop forever?")
        .put("budgets", new JsonObject().put("execute_code_calls", 2)));
    assertThat(analysis.getString("status")).isEqualTo("budget_exhausted");
    assertThat(analysis.getJsonObject("error").getString("type")).isEqualTo("BudgetExceeded");
    assertThat(analysis.getJsonObject("error").getString("message")).startsWith("execute_code_calls");
    assertThat(analysis.getJsonArray("steps")).hasSize(2);
    assertThat(analysis.getString("finished_at")).isNotNull();
  }

  @Test
  @DisplayName("search calls over the budget raise LimitExceeded in the code")
  void searchBudget() {
    h.model.then(execute("await search('duck')\ntry:\n    await search('duck again')\nexcept LimitExceeded as e:\n"
        + "    print('caught', e)"), answer("limited", "print(1)"));
    JsonObject analysis = ask(new JsonObject().put("question", "Search twice?")
        .put("budgets", new JsonObject().put("search_calls", 1)));
    assertThat(analysis.getString("status")).isEqualTo("succeeded");
    JsonObject result = analysis.getJsonArray("steps").getJsonObject(0).getJsonObject("result");
    String stdout = result.getString("stdout");
    assertThat(stdout).as(result.encodePrettily()).startsWith("caught").contains("1 search() calls");
  }

  @Test
  @DisplayName("a 429 with Retry-After is waited out, then the analysis goes on")
  void rateLimitedThenSuccess() {
    h.model.then(rateLimited("1"), execute("1 + 1"), answer("2", "print(1 + 1)"));
    JsonObject analysis = ask("One plus one?");
    assertThat(analysis.getString("status")).isEqualTo("succeeded");
    assertThat(h.model.requests()).hasSize(3);
  }

  @Test
  @DisplayName("a storm of 500s fails the analysis cleanly as ModelUnavailable, its record complete")
  void serverErrorStorm() {
    h.model.then(execute("x = 1"), status(500), status(500), status(500));
    JsonObject analysis = ask("Is the model up?");
    assertThat(analysis.getString("status")).isEqualTo("failed");
    assertThat(analysis.getJsonObject("error").getString("type")).isEqualTo("ModelUnavailable");
    assertThat(analysis.getJsonArray("steps")).hasSize(1);
    assertThat(analysis.getString("finished_at")).isNotNull();
    String events = h.get("/v1/analyses/" + analysis.getString("id") + "/events").bodyAsString();
    List<JsonObject> parsed = AgentHarness.events(events);
    assertThat(parsed.get(parsed.size() - 1).getString("type")).isEqualTo("failed");
    assertThat(parsed.get(parsed.size() - 1).getString("status")).isEqualTo("failed");
  }

  @Test
  @DisplayName("a scoped analysis sees only its documents (list, search, /documents) and its preloaded documents")
  void scopedAndPreloaded() {
    String probe = """
        import json
        from pathlib import Path
        ids = [d['id'] for d in await list_documents()]
        hit_docs = sorted(set(h['document_id'] for h in await search('table', limit=20)))
        dirs = sorted(p.name for p in Path('/documents').iterdir())
        print(json.dumps({"ids": ids, "hits": hit_docs, "dirs": dirs, "preloaded": [d['id'] for d in documents],
                          "keys": sorted(documents[0].keys())}))
        """;
    h.model.then(execute(probe), answer("scoped", "print(1)"));
    JsonObject analysis = ask(new JsonObject().put("question", "What do I see?")
        .put("document_ids", new JsonArray().add(word.toString())).put("preload", true));
    assertThat(analysis.getString("status")).as(analysis.encodePrettily()).isEqualTo("succeeded");
    JsonObject seen = new JsonObject(analysis.getJsonArray("steps").getJsonObject(0).getJsonObject("result")
        .getString("stdout").trim());
    assertThat(seen.getJsonArray("ids").getList()).containsExactly(word.toString());
    assertThat(seen.getJsonArray("hits").getList()).containsOnly(word.toString());
    assertThat(seen.getJsonArray("dirs").getList()).containsExactly(word.toString());
    assertThat(seen.getJsonArray("preloaded").getList()).containsExactly(word.toString());
    assertThat(seen.getJsonArray("keys").getList()).containsExactly("content", "id", "title", "uri");
  }

  @Test
  @DisplayName("on a gateway configured to finish, a client that disconnects mid-stream leaves the analysis"
      + " running to its answer, its sandbox removed and its record complete")
  void disconnectFinishes() throws Exception {
    h.model.then(execute("x = 6 * 7\nx"), answer("42", "print(6 * 7)"));
    UUID id = h.postAndDisconnect(new JsonObject().put("question", "Six times seven?").put("stream", true),
        event -> "started".equals(event.getString("type")));
    JsonObject analysis = h.awaitEnd(id);
    assertThat(analysis.getString("status")).isEqualTo("succeeded");
    assertThat(analysis.getString("answer")).isEqualTo("42");
    List<JsonObject> events = AgentHarness.events(h.get("/v1/analyses/" + id + "/events").bodyAsString());
    assertThat(events.get(events.size() - 1).getString("type")).isEqualTo("answer");
  }

  @Test
  @DisplayName("GET /events takes up after Last-Event-ID, as an EventSource reconnecting sends it; a malformed one is a 400")
  void eventsResumeAfterLastEventId() throws Exception {
    h.model.then(execute("print(6 * 7)"), answer("42", "print(6 * 7)"));
    JsonObject analysis = h.post("/v1/analyses", new JsonObject().put("question", "Six times seven?")).bodyAsJsonObject();
    String path = "/v1/analyses/" + analysis.getString("id") + "/events";
    List<JsonObject> all = AgentHarness.events(h.get(path).bodyAsString());
    assertThat(all.size()).isGreaterThan(3);
    var resumed = h.gateway.client().get(path).putHeader("Last-Event-ID", "2").send().await();
    assertThat(resumed.statusCode()).isEqualTo(200);
    List<JsonObject> rest = AgentHarness.events(resumed.bodyAsString());
    assertThat(rest).containsExactlyElementsOf(all.subList(2, all.size()));
    assertThat(rest.get(0).getLong("seq")).isEqualTo(3L);
    for (String bad : List.of("-1", "two", "1e3", "99999999999999999999")) {
      var r = h.gateway.client().get(path).putHeader("Last-Event-ID", bad).send().await();
      assertThat(r.statusCode()).as(bad).isEqualTo(400);
      assertThat(r.bodyAsJsonObject().getJsonObject("error").getString("code")).isEqualTo("invalid_last_event_id");
    }
  }

  @Test
  @DisplayName("a running analysis has at most 8 event streams following it; a ninth is 429 too_many_followers")
  void followersAreBounded() throws Exception {
    ScriptedModelServer.Held held = new ScriptedModelServer.Held();
    h.model.then(held, answer("done", "print(1)"));
    var posted = h.gateway.client().post("/v1/analyses").sendJsonObject(new JsonObject().put("question", "Wait?"));
    held.asked().get(120, java.util.concurrent.TimeUnit.SECONDS);
    String id = h.get("/v1/analyses").bodyAsJsonObject().getJsonArray("analyses").getJsonObject(0).getString("id");
    var http = java.net.http.HttpClient.newHttpClient();
    var request = java.net.http.HttpRequest.newBuilder(java.net.URI.create(h.gateway.url() + "/v1/analyses/" + id + "/events"))
        .header("Authorization", "Bearer " + h.gateway.apiKey()).header("Accept", "text/event-stream").build();
    List<java.io.InputStream> streams = new java.util.ArrayList<>();
    try {
      for (int i = 0; i < 8; i++) {
        var r = http.send(request, java.net.http.HttpResponse.BodyHandlers.ofInputStream());
        assertThat(r.statusCode()).as("follower " + i).isEqualTo(200);
        streams.add(r.body());
      }
      var ninth = h.get("/v1/analyses/" + id + "/events");
      assertThat(ninth.statusCode()).as(ninth.bodyAsString()).isEqualTo(429);
      assertThat(ninth.bodyAsJsonObject().getJsonObject("error").getString("code")).isEqualTo("too_many_followers");
    } finally {
      for (var in : streams) {
        in.close();
      }
      held.reply().complete(execute("print(1)"));
    }
    JsonObject done = posted.await().bodyAsJsonObject();
    assertThat(done.getString("status")).as(done.encodePrettily()).isEqualTo("succeeded");
  }

  @Test
  @DisplayName("bad requests get 4xx errors that name the problem")
  void badRequests() {
    assertThat(h.post("/v1/analyses", new JsonObject()).statusCode()).isEqualTo(400);
    var overBudget = h.post("/v1/analyses", new JsonObject().put("question", "q")
        .put("budgets", new JsonObject().put("model_turns", 1_000_000)));
    assertThat(overBudget.statusCode()).isEqualTo(400);
    assertThat(overBudget.bodyAsString()).contains("budgets.model_turns");
    var unknownBudget = h.post("/v1/analyses", new JsonObject().put("question", "q")
        .put("budgets", new JsonObject().put("coffee", 1)));
    assertThat(unknownBudget.bodyAsString()).contains("budgets.coffee");
    var unknownDoc = h.post("/v1/analyses", new JsonObject().put("question", "q")
        .put("document_ids", new JsonArray().add(UUID.randomUUID().toString())));
    assertThat(unknownDoc.statusCode()).isEqualTo(404);
    assertThat(unknownDoc.bodyAsJsonObject().getJsonObject("error").getString("code")).isEqualTo("unknown_documents");
    assertThat(h.get("/v1/analyses/not-a-uuid").statusCode()).isEqualTo(400);
    assertThat(h.get("/v1/analyses/" + UUID.randomUUID()).statusCode()).isEqualTo(404);
    assertThat(h.get("/v1/analyses?limit=0").statusCode()).isEqualTo(400);
    assertThat(h.get("/v1/analyses").bodyAsJsonObject().getJsonArray("analyses")).isNotNull();
  }
}
