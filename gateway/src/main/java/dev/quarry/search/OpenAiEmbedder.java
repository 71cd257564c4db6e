package dev.quarry.search;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Embeddings from an OpenAI-compatible {@code /embeddings} endpoint (OpenAI, vLLM, Ollama,
 * llama.cpp server, LiteLLM). Vectors are normalised to unit length, since not every server does
 * and cosine search assumes it. Blocking: call from worker threads.
 */
public final class OpenAiEmbedder implements Embedder {
  private static final int BATCH = 64;
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpClient http = HttpClient.newBuilder()
      .connectTimeout(Duration.ofSeconds(10)).build();
  private final URI endpoint;
  private final String apiKey;
  private final String model;
  private final int dimensions;

  /** {@code baseUrl} as in OPENAI_BASE_URL, e.g. {@code https://api.openai.com/v1}. */
  public OpenAiEmbedder(String baseUrl, String apiKey, String model, int dimensions) {
    if (baseUrl == null || baseUrl.isBlank()) {
      throw new IllegalArgumentException("embedding base URL is empty (QUARRY_EMBEDDING_BASE_URL)");
    }
    if (model == null || model.isBlank()) {
      throw new IllegalArgumentException("embedding model is empty (QUARRY_EMBEDDING_MODEL)");
    }
    this.endpoint = URI.create(baseUrl.replaceAll("/+$", "") + "/embeddings");
    this.apiKey = apiKey == null ? "" : apiKey;
    this.model = model;
    this.dimensions = dimensions;
  }

  /** Asks the endpoint once to learn the model's dimensions. */
  public static OpenAiEmbedder probing(String baseUrl, String apiKey, String model) {
    OpenAiEmbedder probe = new OpenAiEmbedder(baseUrl, apiKey, model, 0);
    int dims = probe.call(List.of("dimension probe")).get(0).length;
    return new OpenAiEmbedder(baseUrl, apiKey, model, dims);
  }

  @Override
  public String modelName() {
    return model;
  }

  @Override
  public int dimensions() {
    return dimensions;
  }

  @Override
  public List<float[]> embedPassages(List<String> texts) {
    List<float[]> out = new ArrayList<>(texts.size());
    for (int i = 0; i < texts.size(); i += BATCH) {
      out.addAll(call(texts.subList(i, Math.min(texts.size(), i + BATCH))));
    }
    return out;
  }

  @Override
  public float[] embedQuery(String query) {
    return call(List.of(query)).get(0);
  }

  private List<float[]> call(List<String> texts) {
    ObjectNode body = JSON.createObjectNode().put("model", model);
    texts.forEach(body.putArray("input")::add);
    HttpRequest.Builder request = HttpRequest.newBuilder(endpoint)
        .timeout(Duration.ofSeconds(60))
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body.toString()));
    if (!apiKey.isBlank()) {
      request.header("Authorization", "Bearer " + apiKey);
    }
    HttpResponse<String> response;
    try {
      response = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new IllegalStateException("embedding request to " + endpoint + " failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while embedding", e);
    }
    if (response.statusCode() / 100 != 2) {
      throw new IllegalStateException("embedding endpoint " + endpoint + " answered "
          + response.statusCode() + ": " + abbreviated(response.body()));
    }
    try {
      JsonNode data = JSON.readTree(response.body()).path("data");
      if (!data.isArray() || data.size() != texts.size()) {
        throw new IllegalStateException("embedding endpoint " + endpoint + " returned "
            + data.size() + " vectors for " + texts.size() + " inputs");
      }
      float[][] vectors = new float[texts.size()][];
      for (JsonNode d : data) {
        int index = d.path("index").asInt(-1);
        JsonNode e = d.path("embedding");
        if (index < 0 || index >= vectors.length || !e.isArray() || e.isEmpty()) {
          throw new IllegalStateException("embedding endpoint " + endpoint
              + " returned a malformed item: " + abbreviated(d.toString()));
        }
        vectors[index] = normalised(e);
        if (dimensions > 0 && vectors[index].length != dimensions) {
          throw new IllegalStateException("embedding model " + model + " returned "
              + vectors[index].length + " dimensions, expected " + dimensions);
        }
      }
      return List.of(vectors);
    } catch (IOException e) {
      throw new IllegalStateException("embedding endpoint " + endpoint + " returned bad JSON", e);
    }
  }

  private static String abbreviated(String s) {
    return s.length() <= 300 ? s : s.substring(0, 300) + "…";
  }

  private static float[] normalised(JsonNode values) {
    float[] v = new float[values.size()];
    double norm = 0;
    for (int i = 0; i < v.length; i++) {
      v[i] = (float) values.get(i).asDouble();
      norm += (double) v[i] * v[i];
    }
    norm = Math.sqrt(norm);
    if (norm > 0) {
      for (int i = 0; i < v.length; i++) {
        v[i] /= (float) norm;
      }
    }
    return v;
  }
}
