package dev.quarry.bench;

import dev.quarry.agent.AgentSettings;
import dev.quarry.config.Config;
import dev.quarry.gateway.Gateway;
import dev.quarry.gateway.OpsSettings;
import dev.quarry.telemetry.QuarryMetrics;
import dev.quarry.sandbox.SandboxSettings;
import dev.quarry.config.Quota;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * What each way in costs over the REST API for the same work, in one run against one gateway in
 * process (real PostgreSQL, sandboxes, the scripted model of the analyses benchmark): an analysis
 * through {@code POST /v1/analyses}, {@code POST /v1/chat/completions} and MCP's {@code ask}; a
 * search through {@code POST /v1/search} and MCP's {@code search}. The surfaces take turns, one
 * request at a time, so that the machine's noise falls on all of them alike.
 */
final class SurfacesBench {
  private static final String ADMIN_TOKEN = "bench-admin-token-0123456789";
  private static final List<String> CELLS = List.of("x = sum(range(1000))\nprint(x)", "print('done', x)");
  private static final int ANALYSES = Integer.getInteger("bench.surfaces.analyses", 30);
  private static final int SEARCHES = Integer.getInteger("bench.surfaces.searches", 200);
  private static final int WARM_UP = Integer.getInteger("bench.surfaces.warmup", 20);

  private final Vertx vertx = Vertx.vertx();
  private WebClient client;
  private String key;
  private int asked;

  String run() throws Exception {
    String gatewayId = "bench-surfaces-" + UUID.randomUUID().toString().substring(0, 8);
    try (BenchDatabase db = BenchDatabase.fresh("surfaces", true)) {
      Path dataDir = Files.createTempDirectory("quarry-bench-surfaces");
      Config base = db.config().withHttpPort(0).withDataDir(dataDir);
      Config config = base.withTenancy(base.tenancy().withAdminToken(ADMIN_TOKEN)
          .withDefault(Quota.CONCURRENT_ANALYSES, 1_000).withDefault(Quota.REQUESTS_PER_MINUTE, 1_000_000));
      BenchModelServer model = new BenchModelServer(vertx, CELLS);
      AgentSettings agent = AgentSettings.fromEnv(Map.of()).withEndpoint(model.baseUrl(), "bench-key", "bench-scripted")
          .withRetries(3, Duration.ofMillis(20), Duration.ofMillis(200), 1_000, Duration.ofSeconds(30));
      SandboxSettings env = SandboxSettings.fromEnv(System.getenv());
      SandboxSettings sandboxes = new SandboxSettings(env.dockerHost(), env.image(), env.command(), env.user(),
          gatewayId, Files.createDirectories(dataDir.resolve("run")), env.limits(), env.maxLimits(),
          env.poolPerTenant(), env.reapInterval(), false, env.maxActive(), env.maxWait());
      Gateway gateway = new Gateway(config, OpsSettings.DEFAULTS, new QuarryMetrics(),
          new Gateway.AgentWiring(agent, sandboxes));
      String deployment = vertx.deployVerticle(gateway).await();
      McpSyncClient mcp = null;
      try {
        client = WebClient.create(vertx, new WebClientOptions().setDefaultHost("127.0.0.1")
            .setDefaultPort(gateway.port()).setIdleTimeout(0));
        String tenant = post("/v1/admin/tenants", ADMIN_TOKEN, new JsonObject().put("name", "surfaces"), 201)
            .getString("id");
        key = post("/v1/admin/tenants/" + tenant + "/keys", ADMIN_TOKEN, new JsonObject().put("name", "bench"), 201)
            .getString("api_key");
        post("/v1/documents", key, new JsonObject().put("title", "Ducks").put("uri", "ducks.txt")
            .put("content_type", "text/plain").put("content", "Ducks are waterbirds. Their feathers are waterproof."
                + " Mallards dabble for plants; diving ducks feed deeper."), 201);
        var transport = HttpClientStreamableHttpTransport.builder("http://127.0.0.1:" + gateway.port())
            .endpoint("/mcp").requestBuilder(HttpRequest.newBuilder().header("Authorization", "Bearer " + key)).build();
        mcp = McpClient.sync(transport).requestTimeout(Duration.ofMinutes(5)).build();
        mcp.initialize();
        McpSyncClient m = mcp;

        List<Surface> analyses = List.of(
            new Surface("POST /v1/analyses (REST)", () -> analysisRest()),
            new Surface("POST /v1/chat/completions", () -> analysisChat()),
            new Surface("MCP tools/call ask", () -> analysisMcp(m)));
        List<Surface> searches = List.of(
            new Surface("POST /v1/search (REST)", () -> post("/v1/search", key,
                new JsonObject().put("query", "waterproof feathers").put("limit", 5), 200).getJsonArray("results").size()),
            new Surface("MCP tools/call search", () -> {
              var r = m.callTool(new McpSchema.CallToolRequest("search",
                  Map.of("query", "waterproof feathers", "limit", 5)));
              if (Boolean.TRUE.equals(r.isError())) {
                throw new IllegalStateException("MCP search failed: " + r.content());
              }
              return 1;
            }));
        String load = Files.readString(Path.of("/proc/loadavg")).trim();
        // Taking a sandbox from the warm pool starts its replacement, hundreds of ms of CPU: each
        // analysis starts once the pool is full again, or the next surface would share the cores with it.
        UUID tenantId = UUID.fromString(tenant);
        Runnable settled = () -> gateway.sandboxes().warm(tenantId).await();
        alternate(analyses, WARM_UP, settled);
        alternate(searches, WARM_UP * 10, () -> {});
        List<List<Double>> analysisMs = alternate(analyses, ANALYSES, settled);
        List<List<Double>> searchMs = alternate(searches, SEARCHES, () -> {});

        StringBuilder md = new StringBuilder();
        md.append("`./quarry bench surfaces`: the same work through each way in, one request at a time, the surfaces"
            + " taking turns, each analysis once the sandbox pool is full again (").append(WARM_UP).append(" analyses and ").append(WARM_UP * 10)
            .append(" searches of each first, unmeasured). An analysis is ").append(CELLS.size())
            .append(" cells against the scripted model; a search is one query over one small document. The chat"
                + " completion is posted as plain JSON; MCP goes through the MCP Java SDK's own client. Load average"
                + " before: ").append(load).append(".\n\n");
        md.append(Percentiles.header()).append('\n');
        table(md, analyses, analysisMs);
        table(md, searches, searchMs);
        md.append('\n');
        double restAnalysis = Percentiles.of(array(analysisMs.get(0))).p50();
        double restSearch = Percentiles.of(array(searchMs.get(0))).p50();
        md.append(String.format(Locale.ROOT, "Overhead over REST at p50: chat completions %+.1f ms, MCP ask %+.1f ms"
                + " (of %.1f ms); MCP search %+.1f ms (of %.1f ms): MCP's search is a loopback call of the REST API"
                + " behind the JSON-RPC exchange.%n",
            Percentiles.of(array(analysisMs.get(1))).p50() - restAnalysis,
            Percentiles.of(array(analysisMs.get(2))).p50() - restAnalysis, restAnalysis,
            Percentiles.of(array(searchMs.get(1))).p50() - restSearch, restSearch));
        return md.toString();
      } finally {
        if (mcp != null) {
          mcp.closeGracefully();
        }
        vertx.undeploy(deployment).await();
        model.close();
        vertx.close().await();
      }
    }
  }

  private record Surface(String name, Supplier<Object> call) {}

  /**
   * Runs each surface {@code rounds} times, taking turns (each round starting one surface later, so
   * none always follows the same one), with {@code settle} before each call, outside its time; the
   * milliseconds of each, by surface.
   */
  private static List<List<Double>> alternate(List<Surface> surfaces, int rounds, Runnable settle) {
    List<List<Double>> ms = new ArrayList<>();
    surfaces.forEach(s -> ms.add(new ArrayList<>()));
    for (int i = 0; i < rounds; i++) {
      for (int k = 0; k < surfaces.size(); k++) {
        int s = (i + k) % surfaces.size();
        settle.run();
        long start = System.nanoTime();
        surfaces.get(s).call().get();
        ms.get(s).add((System.nanoTime() - start) / 1e6);
      }
    }
    return ms;
  }

  private static void table(StringBuilder md, List<Surface> surfaces, List<List<Double>> ms) {
    for (int s = 0; s < surfaces.size(); s++) {
      md.append(Percentiles.of(array(ms.get(s))).row(surfaces.get(s).name())).append('\n');
    }
  }

  private static double[] array(List<Double> values) {
    return values.stream().mapToDouble(Double::doubleValue).toArray();
  }

  private String question() {
    return "bench analysis " + (asked++) + ": what do the cells print?";
  }

  private Object analysisRest() {
    JsonObject a = post("/v1/analyses", key, new JsonObject().put("question", question()), 200);
    require("succeeded".equals(a.getString("status")), a);
    return a;
  }

  private Object analysisChat() {
    JsonObject c = post("/v1/chat/completions", key, new JsonObject().put("model", "quarry")
        .put("messages", new JsonArray().add(new JsonObject().put("role", "user").put("content", question()))), 200);
    require(c.getJsonObject("quarry").getString("status").equals("succeeded"), c);
    return c;
  }

  private Object analysisMcp(McpSyncClient mcp) {
    var r = mcp.callTool(new McpSchema.CallToolRequest("ask", Map.of("question", question())));
    if (Boolean.TRUE.equals(r.isError())) {
      throw new IllegalStateException("MCP ask failed: " + r.content());
    }
    return r;
  }

  private static void require(boolean ok, JsonObject what) {
    if (!ok) {
      throw new IllegalStateException("unexpected: " + what.encode());
    }
  }

  private JsonObject post(String path, String bearer, JsonObject body, int status) {
    HttpResponse<Buffer> r = client.post(path).bearerTokenAuthentication(bearer).sendJsonObject(body).await();
    if (r.statusCode() != status) {
      throw new IllegalStateException(path + ": " + r.statusCode() + " " + r.bodyAsString());
    }
    return r.bodyAsJsonObject();
  }
}
