package dev.quarry.agent;

import static dev.quarry.agent.ScriptedModelServer.answer;
import static dev.quarry.agent.ScriptedModelServer.execute;
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

@DisplayName("Analyses on a gateway that cancels an analysis whose streaming client went away")
class AnalysisStreamingTest {
  static AgentHarness h;
  static UUID duck;

  @BeforeAll
  static void start() throws Exception {
    h = new AgentHarness(true);
    duck = h.ingest("docling/html/wiki_duck.html");
  }

  @AfterAll
  static void stop() throws Exception {
    h.close();
  }

  @AfterEach
  void nothingLeft() throws Exception {
    h.model.reset();
    h.assertNoSandboxes();
  }

  @Test
  @DisplayName("a client that disconnects mid-stream cancels the analysis: its sandbox is removed and its"
      + " record ends with one terminal event")
  void disconnectCancels() throws Exception {
    h.model.then(execute("n = 0\nwhile True:\n    n = n + 1"), answer("never", "print(1)"));
    UUID id = h.postAndDisconnect(new JsonObject().put("question", "Count forever?").put("stream", true),
        event -> "code".equals(event.getString("type")));
    JsonObject analysis = h.awaitEnd(id);
    assertThat(analysis.getString("status")).isEqualTo("cancelled");
    assertThat(analysis.getJsonObject("error").getString("type")).isEqualTo("Cancelled");
    assertThat(analysis.getString("finished_at")).isNotNull();
    assertThat(h.model.requests()).as("no model turn after the cancel").hasSize(1);
    List<JsonObject> events = AgentHarness.events(h.get("/v1/analyses/" + id + "/events").bodyAsString());
    assertThat(events.get(0).getString("type")).isEqualTo("started");
    assertThat(events.stream().filter(e -> List.of("answer", "failed").contains(e.getString("type")))).hasSize(1);
    JsonObject last = events.get(events.size() - 1);
    assertThat(last.getString("type")).isEqualTo("failed");
    assertThat(last.getString("status")).isEqualTo("cancelled");
  }

  @Test
  @DisplayName("a replay notes the documents created since the analysis ran")
  void replayNotesChangedDocuments() {
    h.model.then(execute("docs = await list_documents()\nprint(len(docs))"),
        answer("counted", "docs = await list_documents()\nprint(len(docs) > 0)"));
    JsonObject analysis = h.post("/v1/analyses", new JsonObject().put("question", "How many documents?"))
        .bodyAsJsonObject();
    assertThat(analysis.getString("status")).isEqualTo("succeeded");
    var added = h.post("/v1/documents", new JsonObject().put("title", "Later note").put("uri", "notes/later.txt")
        .put("content", "A note added after the analysis.").put("content_type", "text/plain"));
    assertThat(added.statusCode()).as(added.bodyAsString()).isEqualTo(201);
    String addedId = added.bodyAsJsonObject().getString("id");
    JsonObject replay = h.post("/v1/analyses/" + analysis.getString("id") + "/replay", new JsonObject())
        .bodyAsJsonObject();
    assertThat(replay.getJsonObject("replay").getString("stdout")).isEqualTo("True\n");
    assertThat(replay.getJsonArray("documents_changed").stream().map(o -> ((JsonObject) o).getString("document_id")))
        .containsExactly(addedId);
    var noProgram = h.post("/v1/analyses/" + UUID.randomUUID() + "/replay", new JsonObject());
    assertThat(noProgram.statusCode()).isEqualTo(404);
  }

  /** What the system prompt promises, checked inside a real sandbox. */
  private static final String PROBE = """
      import json
      import re
      import math
      from pathlib import Path
      out = {}
      hits = await search('duck', limit=2)
      out['hit'] = sorted(hits[0].keys())
      docs = await list_documents()
      out['listed'] = sorted(docs[0].keys())
      out['llm_is_str'] = isinstance(await llm('say hi'), str)
      d = Path('/documents/' + docs[0]['id'])
      out['files'] = sorted(p.name for p in d.iterdir())
      out['metadata'] = sorted(json.loads((d / 'metadata.json').read_text()).keys())
      out['item'] = sorted(json.loads((d / 'items.jsonl').read_text().splitlines()[0]).keys())
      toc = json.loads((d / 'toc.json').read_text())
      out['toc'] = sorted(toc.keys())
      out['node'] = sorted(toc['tree'][0].keys())
      out['preloaded'] = sorted(documents[0].keys())
      out['modules'] = [math.sqrt(16), re.sub('a', 'b', 'aa')]
      print(json.dumps(out))
      """;

  @Test
  @DisplayName("every name the system prompt promises exists in the sandbox, with the keys it names")
  void promptNamesExist() {
    h.model.then(execute(PROBE), answer("probed", "print(1)"),
        execute("try:\n    documents\n    print('defined')\nexcept NameError:\n    print('undefined')"),
        answer("probed", "print(1)"));
    JsonObject analysis = h.post("/v1/analyses", new JsonObject().put("question", "probe")
        .put("document_ids", new JsonArray().add(duck.toString())).put("preload", true)).bodyAsJsonObject();
    JsonObject result = analysis.getJsonArray("steps").getJsonObject(0).getJsonObject("result");
    assertThat(result.getBoolean("success")).as(result.encodePrettily()).isTrue();
    JsonObject seen = new JsonObject(result.getString("stdout").trim());

    assertKeys(seen, "hit", "chunk_id", "content", "document_id", "document_title", "document_uri", "score",
        "page_numbers", "headings", "doc_item_refs", "labels");
    assertKeys(seen, "listed", "id", "title", "uri", "created_at");
    assertKeys(seen, "files", "metadata.json", "content.txt", "items.jsonl", "toc.json");
    assertKeys(seen, "metadata", "id", "title", "uri", "created_at");
    assertKeys(seen, "item", "position", "self_ref", "label", "text", "page_numbers", "heading_level", "tree_depth");
    assertKeys(seen, "toc", "doc_id", "title", "tree");
    assertKeys(seen, "node", "self_ref", "level", "title", "position", "page_numbers", "item_range", "children");
    assertKeys(seen, "preloaded", "id", "title", "uri", "content");
    assertThat(seen.getBoolean("llm_is_str")).isTrue();
    assertThat(seen.getJsonArray("modules").getList()).containsExactly(4.0, "bb");
    for (String name : List.of("await search(query, limit=10)`", "await list_documents()`", "await llm(prompt)`",
        "documents`", "/documents/{document_id}/", "json", "re", "math", "pathlib.Path", "execute_code")) {
      assertThat(SystemPrompt.TEXT).as("the prompt names " + name).contains("`" + name);
    }

    JsonObject unloaded = h.post("/v1/analyses", new JsonObject().put("question", "probe without preload"))
        .bodyAsJsonObject();
    assertThat(unloaded.getJsonArray("steps").getJsonObject(0).getJsonObject("result").getString("stdout"))
        .isEqualTo("undefined\n");
  }

  /** The sandbox has exactly these keys, and the prompt names each of them. */
  private static void assertKeys(JsonObject seen, String what, String... keys) {
    assertThat(seen.getJsonArray(what).getList()).as(what).containsExactlyInAnyOrder((Object[]) keys);
    for (String key : keys) {
      assertThat(SystemPrompt.TEXT).as("the prompt names " + what + " key " + key).contains("`" + key + "`");
    }
  }
}
