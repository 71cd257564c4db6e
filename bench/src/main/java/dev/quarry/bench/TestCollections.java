package dev.quarry.bench;

import dev.quarry.bench.TestCollection.Doc;
import dev.quarry.bench.TestCollection.Query;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Loads the collections in {@code shared/data/retrieval} (formats described in its README). */
public final class TestCollections {
  private static final Pattern TREC_DOC =
      Pattern.compile("<DOC>\\s*<DOCNO>\\s*(\\S+?)\\s*</DOCNO>(.*?)</DOC>", Pattern.DOTALL);
  private static final Pattern TREC_TOPIC =
      Pattern.compile("<top>\\s*<num>\\s*(\\S+?)\\s*</num>\\s*<title>(.*?)</title>\\s*</top>", Pattern.DOTALL);
  /** Cranfield's grade 5 stands for the original file's -1 code: not a relevance grade. */
  private static final int CRANFIELD_NOT_A_GRADE = 5;

  private TestCollections() {}

  public static Path retrievalRoot(Path sharedData) {
    return sharedData.resolve("retrieval");
  }

  public static TestCollection vaswani(Path retrievalRoot) {
    Path dir = retrievalRoot.resolve("vaswani_npl");
    List<Doc> docs = new ArrayList<>();
    int empty = 0;
    Matcher d = TREC_DOC.matcher(read(dir.resolve("corpus/doc-text.trec")));
    while (d.find()) {
      String text = normalise(d.group(2));
      if (text.isEmpty()) {
        empty++;
      } else {
        docs.add(new Doc(d.group(1), text));
      }
    }
    List<Query> queries = new ArrayList<>();
    Matcher t = TREC_TOPIC.matcher(read(dir.resolve("query-text.trec")));
    while (t.find()) {
      queries.add(new Query(t.group(1), normalise(t.group(2))));
    }
    return new TestCollection("vaswani", require(docs, dir), require(queries, dir),
        qrels(dir.resolve("qrels"), Integer.MAX_VALUE), empty);
  }

  public static TestCollection cranfield(Path retrievalRoot) {
    Path dir = retrievalRoot.resolve("cranfield");
    List<Doc> docs = new ArrayList<>();
    int empty = 0;
    for (Map.Entry<String, Map<Character, String>> e : smart(read(dir.resolve("cran.all.1400"))).entrySet()) {
      String text = normalise(e.getValue().getOrDefault('W', ""));
      if (text.isEmpty()) {
        empty++;
      } else {
        docs.add(new Doc(e.getKey(), text));
      }
    }
    // The judgments number queries by their 1-based order in cran.qry, not by their .I field.
    List<Query> queries = new ArrayList<>();
    int order = 0;
    for (Map<Character, String> q : smart(read(dir.resolve("cran.qry"))).values()) {
      queries.add(new Query(Integer.toString(++order), normalise(q.getOrDefault('W', ""))));
    }
    return new TestCollection("cranfield", require(docs, dir), require(queries, dir),
        qrels(dir.resolve("QRelsCorrectedforTRECeval"), CRANFIELD_NOT_A_GRADE), empty);
  }

  /**
   * A BEIR-format collection ({@code corpus.jsonl} with {@code _id}, {@code title}, {@code text};
   * {@code queries.jsonl}; {@code qrels/test.tsv} as {@code query-id corpus-id score}, with or
   * without a header line): here agentset's 5,000-passage MS MARCO subset. A passage's title, when
   * it has one, goes before its text, as BEIR's own evaluation does.
   */
  public static TestCollection msmarco(Path retrievalRoot) {
    Path dir = retrievalRoot.resolve("agentset_msmarco");
    List<Doc> docs = new ArrayList<>();
    int empty = 0;
    for (String line : read(dir.resolve("corpus.jsonl")).split("\n")) {
      if (line.isBlank()) {
        continue;
      }
      JsonObject o = new JsonObject(line);
      String title = o.getString("title", "");
      String text = normalise((title.isBlank() ? "" : title + " ") + o.getString("text", ""));
      if (text.isEmpty()) {
        empty++;
      } else {
        docs.add(new Doc(o.getString("_id"), text));
      }
    }
    List<Query> queries = new ArrayList<>();
    for (String line : read(dir.resolve("queries.jsonl")).split("\n")) {
      if (!line.isBlank()) {
        JsonObject o = new JsonObject(line);
        queries.add(new Query(o.getString("_id"), normalise(o.getString("text"))));
      }
    }
    Map<String, Map<String, Integer>> qrels = new LinkedHashMap<>();
    for (String line : read(dir.resolve("qrels/test.tsv")).split("\n")) {
      String[] f = line.trim().split("\t");
      if (f.length != 3 || !f[2].matches("-?\\d+")) {
        continue; // the header line, or a blank one
      }
      qrels.computeIfAbsent(f[0], k -> new LinkedHashMap<>()).put(f[1], Integer.parseInt(f[2]));
    }
    return new TestCollection("msmarco", require(docs, dir), require(queries, dir), qrels, empty);
  }

  /** SMART records: {@code .I id} then fields {@code .T .A .B .W}, each running to the next dot line. */
  static Map<String, Map<Character, String>> smart(String text) {
    Map<String, Map<Character, String>> records = new LinkedHashMap<>();
    Map<Character, String> current = null;
    char field = 0;
    StringBuilder body = new StringBuilder();
    for (String line : text.split("\n", -1)) {
      boolean marker = line.length() >= 2 && line.charAt(0) == '.' && Character.isLetter(line.charAt(1))
          && (line.length() == 2 || Character.isWhitespace(line.charAt(2)));
      if (!marker) {
        body.append(line).append('\n');
        continue;
      }
      if (current != null && field != 0) {
        current.put(field, body.toString());
      }
      body.setLength(0);
      field = line.charAt(1);
      if (field == 'I') {
        current = new LinkedHashMap<>();
        records.put(line.substring(2).trim(), current);
        field = 0;
      }
    }
    if (current != null && field != 0) {
      current.put(field, body.toString());
    }
    return records;
  }

  /** {@code qid 0 docid grade} rows; grades at or above {@code excludedGrade} are left out. */
  static Map<String, Map<String, Integer>> qrels(Path file, int excludedGrade) {
    Map<String, Map<String, Integer>> qrels = new LinkedHashMap<>();
    int lineNo = 0;
    for (String line : read(file).split("\n")) {
      lineNo++;
      if (line.isBlank()) {
        continue;
      }
      String[] f = line.trim().split("\\s+");
      if (f.length != 4) {
        throw new IllegalArgumentException(file + ":" + lineNo + ": expected 'qid 0 docid grade', got: " + line);
      }
      int grade = Integer.parseInt(f[3]);
      if (grade >= excludedGrade) {
        continue;
      }
      qrels.computeIfAbsent(f[0], k -> new LinkedHashMap<>()).put(f[2], grade);
    }
    return qrels;
  }

  private static String normalise(String s) {
    return s.replaceAll("\\s+", " ").trim();
  }

  private static <T> List<T> require(List<T> list, Path dir) {
    if (list.isEmpty()) {
      throw new IllegalArgumentException("nothing parsed from " + dir + ": is the data there?");
    }
    return List.copyOf(list);
  }

  private static String read(Path file) {
    try {
      return Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }
}
