package dev.quarry.bench;

import dev.quarry.config.Config;
import dev.quarry.gateway.Gateway;
import dev.quarry.ingest.Reembedder;
import dev.quarry.config.Quota;
import dev.quarry.tenancy.Tenants;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.ext.web.multipart.MultipartForm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.apache.pdfbox.Loader;
import org.apache.pdfbox.pdmodel.PDDocument;

/**
 * Finding the evidence page of a filing question: the filings in {@code shared/data/filings/pdfs}
 * go in through {@code POST /v1/documents} of a gateway started in process, then each question of
 * {@code questions.jsonl} is sent as it is to {@code POST /v1/search} (limit 10), once scoped to
 * its own filing and once over all of them. A question counts as found at k when one of the first
 * k hits is from its filing and its pages include one of its evidence pages
 * ({@code evidence_page_num} is 0-based; Quarry's page numbers start at 1).
 */
public final class FilingsBench {
  private static final int LIMIT = 10;
  private static final int[] KS = {1, 3, 10};

  private final BenchPaths paths;

  public FilingsBench(BenchPaths paths) {
    this.paths = paths;
  }

  private record Question(String id, String type, String doc, String text, List<Integer> pages) {}

  public String run() throws Exception {
    Path dir = paths.sharedData().resolve("filings");
    List<Path> pdfs;
    try (Stream<Path> s = Files.list(dir.resolve("pdfs"))) {
      pdfs = s.filter(p -> p.toString().endsWith(".pdf")).sorted().toList();
    }
    // -Dbench.filings=A,B narrows a run to those filings (names without .pdf) and their questions.
    String only = System.getProperty("bench.filings", "");
    if (!only.isBlank()) {
      List<String> names = List.of(only.split(","));
      pdfs = pdfs.stream().filter(p -> names.contains(p.getFileName().toString().replaceFirst("\\.pdf$", ""))).toList();
    }
    List<String> kept = pdfs.stream().map(p -> p.getFileName().toString().replaceFirst("\\.pdf$", "")).toList();
    List<Question> questions = new ArrayList<>();
    for (String line : Files.readAllLines(dir.resolve("questions.jsonl"))) {
      if (line.isBlank()) {
        continue;
      }
      JsonObject q = new JsonObject(line);
      if (!kept.contains(q.getString("doc_name"))) {
        continue;
      }
      List<Integer> pages = new ArrayList<>();
      for (Object e : q.getJsonArray("evidence")) {
        pages.add(((JsonObject) e).getInteger("evidence_page_num") + 1);
      }
      questions.add(new Question(q.getString("financebench_id"), q.getString("question_type"), q.getString("doc_name"), q.getString("question"), pages));
    }
    int totalPages = 0;
    for (Path p : pdfs) {
      try (PDDocument d = Loader.loadPDF(p.toFile())) {
        totalPages += d.getNumberOfPages();
      }
    }
    StringBuilder md = new StringBuilder();
    // -Dbench.filings.reuse=TAG keeps the ingested filings in quarry_bench_filings (plus the suffix)
    // and reuses them while TAG is the same, for trying query-side changes without a 20-minute ingest.
    // TAG must name whatever decides the chunks (the commit of the ingest code): nothing checks it.
    String reuse = System.getProperty("bench.filings.reuse", "");
    try (BenchDatabase db = reuse.isBlank() ? BenchDatabase.fresh("filings", true)
        : BenchDatabase.reusable("filings", true, reuse + "|" + String.join(",", kept), "256MB")) {
      Config base = db.config().withHttpPort(0).withDataDir(paths.work().resolve("filings-data"))
          .withMaxUploadBytes(64L << 20);
      Config config = base.withTenancy(base.tenancy().withDefault(Quota.REQUESTS_PER_MINUTE,
          Quota.REQUESTS_PER_MINUTE.hardLimit()));
      String key = db.createKey(Tenants.DEFAULT);
      Vertx vertx = Vertx.vertx();
      try {
        Gateway gateway = new Gateway(config);
        await(vertx.deployVerticle(gateway));
        WebClient client = WebClient.create(vertx, new WebClientOptions().setIdleTimeout(0));
        Map<String, String> idByName = new LinkedHashMap<>();
        long t0 = System.nanoTime();
        int chunks = 0;
        for (Path p : db.needsLoad() ? pdfs : List.<Path>of()) {
          String name = p.getFileName().toString();
          // -Dbench.filings.opaque=true uploads each filing as filing-N.pdf, as filings named by an
          // accession number arrive: then only its own pages can say whose it is.
          String sent = Boolean.getBoolean("bench.filings.opaque") ? "filing-" + (idByName.size() + 1) + ".pdf" : name;
          HttpResponse<Buffer> r = await(client.post(gateway.port(), "127.0.0.1", "/v1/documents")
              .putHeader("Authorization", "Bearer " + key).timeout(1_800_000)
              .sendMultipartForm(MultipartForm.create().binaryFileUpload("file", sent, p.toString(), "application/pdf")));
          if (r.statusCode() / 100 != 2) {
            throw new IllegalStateException("ingest of " + name + " answered " + r.statusCode() + ": " + r.bodyAsString());
          }
          JsonObject body = r.bodyAsJsonObject();
          idByName.put(name.substring(0, name.length() - 4), body.getString("id"));
          chunks += body.getInteger("chunk_count");
          System.out.printf("  filings: %s ingested (%d chunks)%n", name, body.getInteger("chunk_count"));
        }
        double ingestSeconds = (System.nanoTime() - t0) / 1e9;
        if (!reuse.isBlank()) {
          if (db.needsLoad()) {
            db.markLoaded(ingestSeconds, chunks + " chunks");
          } else {
            // Chunks stored by an older ingest are brought up to this one's context and embedded
            // text by the Reembedder the gateway starts, as a deployment's are: wait for it.
            Reembedder.Status brought = await(gateway.reembedding());
            System.out.printf("  filings: reused; %d chunks brought up to date%n", brought.total());
            ingestSeconds = db.recordedSeconds();
            chunks = Integer.parseInt(db.loadDetail().replace(" chunks", ""));
            HttpResponse<Buffer> r = await(client.get(gateway.port(), "127.0.0.1", "/v1/documents?limit=100")
                .putHeader("Authorization", "Bearer " + key).send());
            for (Object o : r.bodyAsJsonObject().getJsonArray("documents")) {
              JsonObject d = (JsonObject) o;
              String name = d.getString("uri");
              idByName.put(name.substring(0, name.length() - 4), d.getString("id"));
            }
          }
        }
        // Each question's ranks (0: not in the top 10), for looking at the misses.
        StringBuilder ranks = new StringBuilder();
        // type -> [within k1, k3, k10, across k1, k3, k10, n]
        Map<String, int[]> found = new TreeMap<>();
        for (Question q : questions) {
          String id = idByName.get(q.doc());
          if (id == null) {
            throw new IllegalStateException("no filing " + q.doc() + ".pdf for: " + q.text());
          }
          int within = rankOf(search(client, gateway.port(), key, q.text(), new JsonArray().add(id)), id, q.pages());
          int across = rankOf(search(client, gateway.port(), key, q.text(), null), id, q.pages());
          ranks.append(new JsonObject().put("financebench_id", q.id()).put("type", q.type()).put("doc", q.doc())
              .put("within", within).put("across", across).encode()).append('\n');
          for (String type : List.of(q.type(), "all", half(q.id()))) {
            int[] f = found.computeIfAbsent(type, t -> new int[7]);
            for (int k = 0; k < KS.length; k++) {
              f[k] += within > 0 && within <= KS[k] ? 1 : 0;
              f[3 + k] += across > 0 && across <= KS[k] ? 1 : 0;
            }
            f[6]++;
          }
        }
        client.close();
        Files.writeString(paths.work().resolve("filings-ranks.jsonl"), ranks);
        md.append(String.format(Locale.ROOT, """
            %d filings (%d pages, %d chunks) from `shared/data/filings`, ingested through `POST /v1/documents` \
            of a gateway started in process (default settings, bge-small-en-v1.5-q), one after another: \
            %.1f s, %.0f ms a page%s. Then each of the %d questions of `questions.jsonl`, as it is, to \
            `POST /v1/search` (limit 10), scoped to its filing (`document_ids`) and over all of them: the share \
            of questions with a hit from its filing whose pages include an evidence page among the first k%s.

            | question type | questions | within top 1 | within top 3 | within top 10 | across top 1 | across top 3 | across top 10 |
            |---|---:|---:|---:|---:|---:|---:|---:|
            """, pdfs.size(), totalPages, chunks, ingestSeconds, ingestSeconds * 1000 / totalPages,
            db.needsLoad() ? "" : " (an earlier run's ingest, reused with `-Dbench.filings.reuse=" + reuse + "`: " + db.loadRecord() + ")",
            questions.size(),
            (only.isBlank() ? "" : " (this run: only " + only + ", so \"across\" is across these)")
                + (Boolean.getBoolean("bench.filings.opaque")
                    ? " (this run: uploaded as filing-1.pdf … filing-10.pdf, so no file name says whose a filing is)" : "")));
        for (Map.Entry<String, int[]> e : found.entrySet()) {
          int[] f = e.getValue();
          md.append("| ").append(e.getKey()).append(" | ").append(f[6]);
          for (int i = 0; i < 6; i++) {
            md.append(String.format(Locale.ROOT, " | %.0f%%", 100.0 * f[i] / f[6]));
          }
          md.append(" |\n");
        }
        int[] all = found.get("all");
        md.append("\n### Targets\n\n");
        md.append(target("within its filing, top 10 >= 90%", all[2], all[6], 0.90));
        md.append(target("within its filing, top 3 >= 70%", all[1], all[6], 0.70));
        md.append(target("across all filings, top 10 >= 80%", all[5], all[6], 0.80));
      } finally {
        await(vertx.close());
      }
    }
    return md.toString();
  }

  /**
   * Which half of the questions a question is in, fixed before any result was looked at: the tuning
   * half (settings are chosen on it) when the CRC-32 of its {@code financebench_id}'s UTF-8 bytes is
   * even, else the report half (only reported). 22 and 19 of the 41.
   */
  static String half(String financebenchId) {
    java.util.zip.CRC32 crc = new java.util.zip.CRC32();
    crc.update(financebenchId.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    return crc.getValue() % 2 == 0 ? "half: tune (CRC-32 even)" : "half: report (CRC-32 odd)";
  }

  private static String target(String what, int hits, int n, double share) {
    double got = (double) hits / n;
    return String.format(Locale.ROOT, "- %s: %.0f%%: %s%n", what, 100 * got, got >= share ? "MET" : "NOT MET");
  }

  private static JsonArray search(WebClient client, int port, String key, String query, JsonArray scope)
      throws Exception {
    JsonObject body = new JsonObject().put("query", query).put("limit", LIMIT);
    if (scope != null) {
      body.put("document_ids", scope);
    }
    HttpResponse<Buffer> r = await(client.post(port, "127.0.0.1", "/v1/search")
        .putHeader("Authorization", "Bearer " + key).sendJsonObject(body));
    if (r.statusCode() != 200) {
      throw new IllegalStateException("POST /v1/search answered " + r.statusCode() + ": " + r.bodyAsString());
    }
    return r.bodyAsJsonObject().getJsonArray("results");
  }

  /** The 1-based rank of the first hit from the document on one of the pages, 0 when none is. */
  private static int rankOf(JsonArray results, String documentId, List<Integer> pages) {
    for (int i = 0; i < results.size(); i++) {
      JsonObject hit = results.getJsonObject(i);
      if (hit.getString("document_id").equals(documentId)
          && hit.getJsonArray("page_numbers").stream().anyMatch(p -> pages.contains(((Number) p).intValue()))) {
        return i + 1;
      }
    }
    return 0;
  }

  private static <T> T await(Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get();
  }
}
