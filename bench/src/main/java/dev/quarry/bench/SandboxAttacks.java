package dev.quarry.bench;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The noisy tenant's attacks through its sandboxes, written in the sandbox's own language as any
 * tenant's code could be (the real runner, not a hostile one): it holds its share of sandboxes
 * scoped to its large documents while they idle in {@code llm()}, floods callbacks, or spins.
 */
final class SandboxAttacks {
  private SandboxAttacks() {}

  /** A streamed execution on a connection of its own, read to its end in the background. */
  static final class Streamed {
    private final Socket socket;
    private final CompletableFuture<Boolean> marked = new CompletableFuture<>();
    private final StringBuilder seen = new StringBuilder();
    private volatile boolean ended;

    private Streamed(Socket socket) {
      this.socket = socket;
    }

    /** Starts {@code body} as a streamed execution; {@link #await} then says whether its output showed {@code marker}. */
    static Streamed launch(Attack.Target target, JsonObject body, String marker) throws IOException {
      Socket socket = RawHttp.connect(target.port(), 0);
      RawHttp.send(socket, "POST", "/v1/executions", target.key(), "application/json",
          body.copy().put("stream", true).encode().getBytes(StandardCharsets.UTF_8));
      Streamed s = new Streamed(socket);
      Thread.ofVirtual().name("noisy-execution").start(() -> s.read(marker));
      return s;
    }

    private void read(String marker) {
      byte[] buffer = new byte[8_192];
      String tail = "";
      try {
        InputStream in = socket.getInputStream();
        int n;
        while ((n = in.read(buffer)) >= 0) {
          String text = new String(buffer, 0, n, StandardCharsets.ISO_8859_1);
          synchronized (seen) {
            if (seen.length() < 4_000) {
              seen.append(text, 0, Math.min(text.length(), 4_000 - seen.length()));
            }
          }
          if ((tail + text).contains(marker)) {
            marked.complete(true);
          }
          String joined = tail + text;
          tail = joined.substring(Math.max(0, joined.length() - marker.length()));
        }
      } catch (IOException e) {
        // closed by stop(), or by the gateway
      }
      ended = true;
      marked.complete(false);
    }

    /** True when the marker came within {@code within}; false when the response ended first or the time passed. */
    boolean await(Duration within) throws InterruptedException {
      try {
        return marked.get(within.toMillis(), TimeUnit.MILLISECONDS);
      } catch (TimeoutException e) {
        return false;
      } catch (java.util.concurrent.ExecutionException e) {
        return false;
      }
    }

    boolean ended() {
      return ended;
    }

    /** The response so far, past its head, on one line (what the gateway said when it refused or failed it). */
    String excerpt() {
      String text;
      synchronized (seen) {
        text = seen.toString();
      }
      int body = text.indexOf("\r\n\r\n");
      String status = text.lines().findFirst().orElse("(no response)");
      String rest = body < 0 ? "" : text.substring(body + 4);
      String one = (status + " " + rest).replaceAll("\\s+", " ").strip();
      return one.length() > 240 ? one.substring(0, 240) + "…" : one;
    }

    void close() {
      RawHttp.closeQuietly(socket);
    }
  }

  /** A document of the noisy tenant and what a sandbox scoped to it copies: its four files, each rounded up to 4 KiB pages. */
  record Doc(String id, long copyBytes) {}

  /**
   * Disk (issue 33, attack 3) and hoarding (issue 14): sandboxes scoped to the tenant's large
   * documents, idling in {@code llm()} (the model holds its reply until the attack stops), until the
   * run directory's 16 MiB (k8s' {@code sizeLimit}) is full to within its smallest document; the
   * rest of its share held by unscoped idle sandboxes; then four more executions asked for.
   */
  static final class ScopedHolds implements Attack {
    private static final String MARKER = "noisy-held-0x51";
    private final Target target;
    private final List<Doc> docs;
    private final int share;
    private final long runDirBytes;
    private final Path runDir;
    private final BenchModelServer model;
    private final List<Streamed> holds = new ArrayList<>();
    private final List<String> refusals = new ArrayList<>();
    private Promise<Void> release;
    private long scopedBytes;
    private int scopedDocs;
    private int scopedHolds;
    private int tries;
    private int extraRefused;
    private int extraOther;

    ScopedHolds(Target target, List<Doc> docs, int share, long runDirBytes, Path runDir, BenchModelServer model) {
      this.target = target;
      this.docs = docs.stream().sorted(Comparator.comparingLong(Doc::copyBytes).reversed()).toList();
      this.share = share;
      this.runDirBytes = runDirBytes;
      this.runDir = runDir;
      this.model = model;
    }

    @Override
    public String name() {
      return "disk: scoped sandboxes held";
    }

    @Override
    public String how() {
      return String.format(Locale.ROOT, "its share of sandboxes (%d), each idling in `llm()` (the model stand-in holds"
          + " the reply), the first ones scoped to its large documents (%d of %.1f MiB of copies in all) until the"
          + " sandboxes' run directory (a %d MiB tmpfs, as the pod's `sizeLimit`) refuses more, feeling for what is left"
          + " by dropping from what failed its smallest document; then 4 more executions asked for", share, docs.size(),
          docs.stream().mapToLong(Doc::copyBytes).sum() / 1048576.0, runDirBytes >> 20);
    }

    @Override
    public void start() throws Exception {
      release = Promise.promise();
      Future<Void> released = release.future();
      model.llmWaitsFor(() -> released);
      List<Doc> remaining = new ArrayList<>(docs);
      // What fails is the bound: the manifest's size is a guess (other sandboxes' files share it).
      long failedAt = runDirBytes + (64 << 10);
      long nextRoom = -1;
      long smallestTriedAt = -1;
      // Bounded: the first holds must still be idling (wall time 110 s) when the phase ends.
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(45);
      while (holds.size() < share && tries < 24 && !remaining.isEmpty() && System.nanoTime() < deadline) {
        long room = nextRoom >= 0 ? nextRoom : failedAt - scopedBytes - 1;
        nextRoom = -1;
        List<Doc> pick = new ArrayList<>();
        long sum = 0;
        for (Doc d : remaining) {
          if (sum + d.copyBytes() <= room) {
            pick.add(d);
            sum += d.copyBytes();
          }
        }
        if (pick.isEmpty()) {
          // Below the estimate's grain: its smallest document once more at this level, and the answer decides.
          if (smallestTriedAt == scopedBytes) {
            break;
          }
          Doc smallest = remaining.get(remaining.size() - 1);
          pick.add(smallest);
          sum = smallest.copyBytes();
          smallestTriedAt = scopedBytes;
        }
        tries++;
        JsonArray ids = new JsonArray();
        pick.forEach(d -> ids.add(d.id()));
        Streamed s = hold(ids);
        if (s.await(Duration.ofSeconds(30))) {
          holds.add(s);
          scopedBytes += sum;
          scopedDocs += pick.size();
          scopedHolds++;
          remaining.removeAll(pick);
        } else {
          refusals.add(String.format(Locale.ROOT, "%.2f MiB: %s", sum / 1048576.0, s.excerpt()));
          s.close();
          if (s.excerpt().contains(" 429 ")) {
            break;
          }
          // Next, the same less its smallest document (or half of it, when one document failed alone).
          failedAt = Math.min(failedAt, scopedBytes + sum);
          nextRoom = pick.size() == 1 ? sum / 2 : sum - pick.get(pick.size() - 1).copyBytes();
        }
      }
      while (holds.size() < share) {
        Streamed s = hold(null);
        if (!s.await(Duration.ofSeconds(30))) {
          refusals.add("unscoped: " + s.excerpt());
          s.close();
          break;
        }
        holds.add(s);
      }
      for (int i = 0; i < 4; i++) {
        HttpResponse<String> r = target.http().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + target.port()
                + "/v1/executions")).timeout(Target.SHORT).header("Authorization", "Bearer " + target.key())
            .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(new JsonObject()
                .put("code", "print(1)").put("limits", new JsonObject().put("wall_time_ms", 1000)).encode())).build(),
            HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() == 429) {
          extraRefused++;
        } else {
          extraOther++;
        }
      }
    }

    private Streamed hold(JsonArray scope) throws IOException {
      JsonObject body = new JsonObject().put("code", "print('" + MARKER + "')\nawait llm('hold this sandbox')")
          .put("limits", new JsonObject().put("wall_time_ms", 110_000));
      if (scope != null) {
        body.put("document_ids", scope);
      }
      return Streamed.launch(target, body, MARKER);
    }

    @Override
    public String check() throws IOException {
      long alive = holds.stream().filter(s -> !s.ended()).count();
      long free = Files.getFileStore(runDir).getUsableSpace();
      return String.format(Locale.ROOT, "%d of %d sandboxes held idle at the phase's end, %d of them scoped to %d documents"
          + " (%.2f MiB of copies); the run directory had %d KiB free of %d MiB; %d scoped launches, %d of them refused"
          + " or failed%s; 4 more asked: %d refused with 429, %d otherwise", alive, share, scopedHolds, scopedDocs,
          scopedBytes / 1048576.0, free >> 10, runDirBytes >> 20, tries, refusals.size(),
          refusals.isEmpty() ? "" : " (the first: " + refusals.get(0) + ")", extraRefused, extraOther);
    }

    @Override
    public void stop() {
      holds.forEach(Streamed::close);
      if (release != null) {
        release.tryComplete();
      }
      model.llmWaitsFor(Future::succeededFuture);
    }
  }

  /**
   * Callbacks (issue 33, attack 4; issue 14): its share of executions, each calling {@code search}
   * with the largest limit one after another until its callback budget (raised to the most an
   * execution may ask) runs out; each sent again as it ends.
   */
  static final class CallbackFlood implements Attack {
    private static final String CODE = """
        n = 0
        while n < 2000:
            try:
                hits = await search('ferry timetable ' + str(n), limit=100)
            except LimitExceeded:
                break
            n = n + 1
        print('searched', n)""";
    private final Target target;
    private final int share;
    private final JsonArray scope;
    private final AtomicBoolean on = new AtomicBoolean();
    private final List<Streamed> running = new CopyOnWriteArrayList<>();
    private final AtomicInteger started = new AtomicInteger();
    private final AtomicInteger ended = new AtomicInteger();
    private final AtomicInteger refused = new AtomicInteger();
    private final List<Thread> loops = new ArrayList<>();
    private double servedAtStart;
    private long startNanos;

    /** {@code scope}: its small documents, so that each reply is small and the calls come as fast as they are answered. */
    CallbackFlood(Target target, int share, List<String> scope) {
      this.target = target;
      this.share = share;
      this.scope = new JsonArray(new ArrayList<>(scope));
    }

    @Override
    public String name() {
      return "callbacks: search flood";
    }

    @Override
    public String how() {
      return String.format(Locale.ROOT, "%d executions (its share), each scoped to its %d small documents and awaiting"
          + " `search(…, limit=100)` one after another, a new query each time (so each is embedded), up to 2,000 times"
          + " (`limits.callbacks` at its maximum), each sent again as it ends (a second later when refused)", share,
          scope.size());
    }

    @Override
    public void start() throws InterruptedException {
      on.set(true);
      servedAtStart = served();
      startNanos = System.nanoTime();
      for (int i = 0; i < share; i++) {
        loops.add(Thread.ofVirtual().name("noisy-flood-" + i).start(this::loop));
      }
      Thread.sleep(3_000); // the sandboxes start and their calls come in
    }

    private void loop() {
      while (on.get()) {
        try {
          Streamed s = Streamed.launch(target, new JsonObject().put("code", CODE).put("document_ids", scope)
              .put("limits", new JsonObject().put("callbacks", 2000).put("wall_time_ms", 110_000)), "searched");
          started.incrementAndGet();
          running.add(s);
          while (on.get() && !s.ended()) {
            s.await(Duration.ofMillis(500));
          }
          running.remove(s);
          s.close();
          ended.incrementAndGet();
          if (s.excerpt().startsWith("HTTP/1.1 429")) {
            // Refused (its share of sandboxes still held while the last ones are removed): sent again
            // after a second, as a client honouring Retry-After would. A client that does not is the
            // request flood of the case before, not a flood of callbacks.
            refused.incrementAndGet();
            Thread.sleep(1_000);
          }
        } catch (IOException | InterruptedException e) {
          return;
        }
      }
    }

    private double served() {
      return target.metrics().get().sum("quarry_callback_duration_seconds_count", "kind=\"search\"", "outcome=\"ok\"");
    }

    @Override
    public String check() {
      double seconds = (System.nanoTime() - startNanos) / 1e9;
      double searches = served() - servedAtStart;
      return String.format(Locale.ROOT, "%d flooding executions running at the phase's end, %d started and %d ended"
          + " in all (%d of them refused with 429, each sent again a second later); the gateway served %.0f `search`"
          + " callbacks in %.0f s (%.0f a second, the quiet tenant's cells' few included)", running.size(), started.get(),
          ended.get(), refused.get(), searches, seconds, searches / seconds);
    }

    @Override
    public void stop() throws InterruptedException {
      on.set(false);
      running.forEach(Streamed::close);
      for (Thread t : loops) {
        t.join(10_000);
      }
    }
  }

  /** CPU (issue 33, attack 5): its share of executions, each spinning in a loop for as long as the phase lasts. */
  static final class BusySandboxes implements Attack {
    private static final String MARKER = "noisy-spin-0x52";
    private final Target target;
    private final int share;
    private final List<Streamed> spinning = new ArrayList<>();
    private int refused;

    BusySandboxes(Target target, int share) {
      this.target = target;
      this.share = share;
    }

    @Override
    public String name() {
      return "CPU: busy sandboxes";
    }

    @Override
    public String how() {
      return String.format(Locale.ROOT, "%d executions (its share), each `while True: pass` (after printing enough to"
          + " flush its output, so the client knows it runs)", share);
    }

    @Override
    public void start() throws Exception {
      // The output is flushed at 8,192 characters: the marker and enough after it to send it before the loop.
      String code = "print('" + MARKER + "' + 'x' * 8200)\nwhile True:\n    pass";
      List<Streamed> launched = new ArrayList<>();
      for (int i = 0; i < share; i++) {
        launched.add(Streamed.launch(target, new JsonObject().put("code", code)
            .put("limits", new JsonObject().put("wall_time_ms", 110_000)), MARKER));
      }
      for (Streamed s : launched) {
        if (s.await(Duration.ofSeconds(30))) {
          spinning.add(s);
        } else {
          refused++;
          s.close();
        }
      }
    }

    @Override
    public String check() {
      long alive = spinning.stream().filter(s -> !s.ended()).count();
      return String.format(Locale.ROOT, "%d of %d sandboxes spinning at the phase's end (%d did not start); load"
          + " average %s", alive, share, refused, NoisyNeighbourBench.loadAverage());
    }

    @Override
    public void stop() {
      spinning.forEach(Streamed::close);
    }
  }
}
