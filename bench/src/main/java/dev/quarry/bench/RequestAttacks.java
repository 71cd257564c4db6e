package dev.quarry.bench;

import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The noisy tenant's attacks over HTTP alone: requests far past its quota, hostile grids to ingest,
 * large responses it never reads, large bodies it never finishes.
 */
final class RequestAttacks {
  private RequestAttacks() {}

  /** Status codes (0: no response: the connection failed or was cut) counted, for the report. */
  static final class Statuses {
    private final Map<Integer, AtomicInteger> counts = new ConcurrentHashMap<>();

    void add(int status) {
      counts.computeIfAbsent(status, k -> new AtomicInteger()).incrementAndGet();
    }

    int total() {
      return counts.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    int count(int status) {
      AtomicInteger n = counts.get(status);
      return n == null ? 0 : n.get();
    }

    @Override
    public String toString() {
      Map<Integer, Integer> sorted = new TreeMap<>();
      counts.forEach((k, v) -> sorted.put(k, v.get()));
      if (sorted.isEmpty()) {
        return "none";
      }
      List<String> parts = new ArrayList<>();
      sorted.forEach((k, v) -> parts.add(v + " × " + (k == 0 ? "no response" : k)));
      return String.join(", ", parts);
    }
  }

  /**
   * Issue 14's tenant-isolation case: the tenant spends its quota first (searches 24 at once until
   * one is refused for requests_per_minute, untimed), then sends 200 searches a second, 20 times its quota,
   * while the quiet tenant is measured: the gateway must refuse them (429) without cost to others.
   */
  static final class QuotaFlood implements Attack {
    private static final int PER_SECOND = 200;
    /** Searches sent at once while its quota is spent: fewer than the 32 bodies a tenant may send at once. */
    private static final int SPEND_BATCH = 24;
    private final Target target;
    private final AtomicBoolean on = new AtomicBoolean();
    private final Statuses spent = new Statuses();
    private final Statuses statuses = new Statuses();
    private Thread sender;
    private long startNanos;
    private double spendSeconds;

    QuotaFlood(Target target) {
      this.target = target;
    }

    @Override
    public String name() {
      return "requests: past its quota";
    }

    @Override
    public String how() {
      return "its quota spent first (searches " + SPEND_BATCH + " at once until one is refused for requests_per_minute; untimed), then " + PER_SECOND
          + " searches a second, 20 times its quota of 600 a minute";
    }

    private HttpRequest search() {
      return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + target.port() + "/v1/search"))
          .timeout(java.time.Duration.ofSeconds(120)).header("Authorization", "Bearer " + target.key())
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(new JsonObject().put("query", "ferry timetable").put("limit", 10)
              .encode())).build();
    }

    @Override
    public void start() {
      // Its bucket spent: batches of 24 at once (under the 32 request bodies a tenant may send at
      // once, whose 429 says nothing of the rate) until one is refused for requests_per_minute (at
      // most 90 s).
      long t0 = System.nanoTime();
      long deadline = t0 + 90_000_000_000L;
      java.util.concurrent.atomic.AtomicBoolean rateRefused = new java.util.concurrent.atomic.AtomicBoolean();
      while (System.nanoTime() < deadline && !rateRefused.get()) {
        List<java.util.concurrent.CompletableFuture<?>> spending = new ArrayList<>();
        for (int i = 0; i < SPEND_BATCH; i++) {
          spending.add(target.http().sendAsync(search(), HttpResponse.BodyHandlers.ofString())
              .whenComplete((r, e) -> {
                int status = e == null ? r.statusCode() : 0;
                spent.add(status);
                if (status == 429 && r.body().contains("requests_per_minute")) {
                  rateRefused.set(true);
                }
              }));
        }
        try {
          java.util.concurrent.CompletableFuture.allOf(spending.toArray(new java.util.concurrent.CompletableFuture[0]))
              .get(Math.max(1, deadline - System.nanoTime()), java.util.concurrent.TimeUnit.NANOSECONDS);
        } catch (Exception e) {
          break; // bounded: what was answered is counted
        }
      }
      spendSeconds = (System.nanoTime() - t0) / 1e9;
      on.set(true);
      startNanos = System.nanoTime();
      HttpRequest search = search();
      sender = Thread.ofVirtual().name("noisy-quota-flood").start(() -> {
        long next = System.nanoTime();
        while (on.get()) {
          target.http().sendAsync(search, HttpResponse.BodyHandlers.discarding())
              .whenComplete((r, e) -> statuses.add(e == null ? r.statusCode() : 0));
          next += 1_000_000_000L / PER_SECOND;
          long wait = next - System.nanoTime();
          if (wait > 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(wait);
          }
        }
      });
    }

    @Override
    public String check() {
      return String.format(Locale.ROOT, "its quota spent first: %d searches answered in %.0f s (%s); then %d searches"
          + " answered in %.0f s: %s", spent.total(), spendSeconds, spent, statuses.total(),
          (System.nanoTime() - startNanos) / 1e9, statuses);
    }

    @Override
    public void stop() throws InterruptedException {
      on.set(false);
      sender.join();
    }
  }

  /**
   * Hostile grids (issue 33, attack 1): as many ingests as its quota lets be under way at once (4),
   * each one of the four grid files of {@link HostileFiles#grids}, sent again as each one ends.
   */
  static final class GridIngests implements Attack {
    private static final int SLOTS = 4;
    private final Target target;
    private final List<HostileFiles.Upload> files = HostileFiles.grids();
    private final AtomicBoolean on = new AtomicBoolean();
    private final Statuses statuses = new Statuses();
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final AtomicLong longestMillis = new AtomicLong();
    private final List<Thread> loops = new ArrayList<>();

    GridIngests(Target target) {
      this.target = target;
    }

    @Override
    public String name() {
      return "memory: hostile grids";
    }

    @Override
    public String how() {
      List<String> sizes = files.stream().map(f -> String.format(Locale.ROOT, "%s %,d B", f.name(), f.bytes().length)).toList();
      return SLOTS + " ingests under way at once (its quota), each one of four files whose tables declare huge grids ("
          + String.join(", ", sizes) + ": 25 cells of `colspan=1000 rowspan=65535` over 5,600 rows twice; a docling"
          + " `data.grid` of one 20,000-cell row and 60,000 empty rows; a GFM header of 60,000 columns over 20,000 rows;"
          + " `w:gridBefore` of 1,500,000,000), each sent again as it ends";
    }

    @Override
    public void start() throws InterruptedException {
      on.set(true);
      for (int i = 0; i < SLOTS; i++) {
        int slot = i;
        loops.add(Thread.ofVirtual().name("noisy-grids-" + i).start(() -> loop(slot)));
        // In this order, so that the two the tenant may run at once are the HTML and docling grids, the
        // quickest to fill a heap; the others wait in its line and start as those end.
        Thread.sleep(300);
      }
      // In force once the heap is three quarters full (or 40 s have passed).
      long deadline = System.nanoTime() + 40_000_000_000L;
      while (System.nanoTime() < deadline) {
        Scrape s = target.metrics().get();
        double max = s.sum("jvm_memory_max_bytes", "id=\"G1 Old Gen\"");
        if (max > 0 && s.sum("jvm_memory_used_bytes", "area=\"heap\"") >= 0.75 * max) {
          break;
        }
        Thread.sleep(500);
      }
    }

    private void loop(int slot) {
      for (int k = slot; on.get(); k++) {
        HostileFiles.Upload file = files.get(k % files.size());
        long start = System.nanoTime();
        Socket socket = null;
        try {
          socket = RawHttp.connect(target.port(), 0);
          open.add(socket);
          String boundary = "grid" + k;
          ByteArrayOutputStream body = new ByteArrayOutputStream();
          body.writeBytes(("--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + k + "-" + file.name()
              + "\"\r\nContent-Type: " + file.contentType() + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
          body.writeBytes(file.bytes());
          body.writeBytes(("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
          RawHttp.send(socket, "POST", "/v1/documents", target.key(),
              "multipart/form-data; boundary=" + boundary, body.toByteArray());
          int status = RawHttp.status(socket.getInputStream());
          statuses.add(status);
          longestMillis.accumulateAndGet((System.nanoTime() - start) / 1_000_000, Math::max);
        } catch (IOException | RuntimeException e) {
          if (on.get()) {
            statuses.add(0);
          }
        } finally {
          if (socket != null) {
            open.remove(socket);
            RawHttp.closeQuietly(socket);
          }
        }
      }
    }

    @Override
    public String check() {
      return String.format(Locale.ROOT, "%d ingests under way at the phase's end; answered so far: %s; the longest"
          + " took %.1f s", open.size(), statuses, longestMillis.get() / 1e3);
    }

    @Override
    public void stop() throws InterruptedException {
      on.set(false);
      open.forEach(RawHttp::closeQuietly);
      for (Thread t : loops) {
        t.join(10_000);
      }
    }
  }

  /**
   * Unread responses (issue 33, attack 2): 200 connections, each asking for the items of the
   * tenant's own 10 MB document ({@code GET /v1/documents/{id}/items}) with a 4 KiB receive buffer,
   * reading nothing.
   */
  static final class UnreadResponses implements Attack {
    private static final int CONNECTIONS = 200;
    private final Target target;
    private final String document;
    private final long itemsBytes;
    private final List<Socket> sockets = new ArrayList<>();
    private int failedToOpen;

    UnreadResponses(Target target, String document, long itemsBytes) {
      this.target = target;
      this.document = document;
      this.itemsBytes = itemsBytes;
    }

    @Override
    public String name() {
      return "memory: unread responses";
    }

    @Override
    public String how() {
      return String.format(Locale.ROOT, "%d connections, each asking for its own document's items (%.1f MB of"
          + " `items.jsonl`) with a 4 KiB receive buffer, and reading nothing", CONNECTIONS, itemsBytes / 1e6);
    }

    @Override
    public void start() throws InterruptedException {
      for (int i = 0; i < CONNECTIONS; i++) {
        try {
          Socket s = RawHttp.connect(target.port(), 4_096);
          RawHttp.head(s, "GET", "/v1/documents/" + document + "/items", target.key(), null, -1);
          sockets.add(s);
        } catch (IOException e) {
          failedToOpen++;
        }
      }
      // In force once every response has begun to arrive (bytes wait in each receive buffer), bounded.
      long deadline = System.nanoTime() + 30_000_000_000L;
      while (waiting() < sockets.size() && System.nanoTime() < deadline) {
        Thread.sleep(250);
      }
    }

    /** Connections with response bytes waiting, unread, in their receive buffer. */
    private int waiting() {
      int n = 0;
      for (Socket s : sockets) {
        try {
          n += s.getInputStream().available() > 0 ? 1 : 0;
        } catch (IOException e) {
          // closed: not waiting
        }
      }
      return n;
    }

    @Override
    public String check() {
      return String.format(Locale.ROOT, "%d of %d connections open at the phase's end with their response's first bytes"
          + " waiting unread (0 bytes read by the client); %d could not be opened", waiting(), CONNECTIONS, failedToOpen);
    }

    @Override
    public void stop() {
      sockets.forEach(RawHttp::closeQuietly);
    }
  }

  /**
   * Held bodies (issue 33, attack 2): 40 JSON ingests declaring 49 MiB each (under the 50 MiB
   * upload limit), sent whole but their last two bytes, then held open. The gateway lets one tenant
   * send 32 bodies at once ({@code BodyPlaces}) and refuses the rest with 429, so 32 are held (1.5 GiB):
   * the 8 more show that bound in the check.
   */
  static final class HeldBodies implements Attack {
    private static final int CONNECTIONS = 40;
    private static final long LENGTH = 49L << 20;
    private final Target target;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final long[] written = new long[CONNECTIONS];
    private final List<Thread> writers = new ArrayList<>();

    HeldBodies(Target target) {
      this.target = target;
    }

    @Override
    public String name() {
      return "memory: held bodies";
    }

    @Override
    public String how() {
      return CONNECTIONS + " JSON ingests (`POST /v1/documents`) declaring " + (LENGTH >> 20) + " MiB each, sent but for"
          + " their last 2 bytes, then held open";
    }

    @Override
    public void start() throws InterruptedException {
      byte[] filler = new byte[1 << 20];
      Arrays.fill(filler, (byte) 'a');
      for (int i = 0; i < CONNECTIONS; i++) {
        int slot = i;
        writers.add(Thread.ofVirtual().name("noisy-body-" + i).start(() -> write(slot, filler)));
      }
      // In force once every body is in but its last bytes, bounded (the gateway's body timeout is 120 s).
      long deadline = System.nanoTime() + 45_000_000_000L;
      for (Thread t : writers) {
        t.join(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
      }
    }

    private void write(int slot, byte[] filler) {
      try {
        Socket s = RawHttp.connect(target.port(), 0);
        sockets.add(s);
        RawHttp.head(s, "POST", "/v1/documents", target.key(), "application/json", LENGTH);
        OutputStream out = s.getOutputStream();
        byte[] start = ("{\"uri\": \"held-" + slot + ".txt\", \"content\": \"").getBytes(StandardCharsets.UTF_8);
        out.write(start);
        long sent = start.length;
        long goal = LENGTH - 2;
        while (sent < goal) {
          int n = (int) Math.min(filler.length, goal - sent);
          out.write(filler, 0, n);
          sent += n;
          written[slot] = sent;
        }
        out.flush();
      } catch (IOException e) {
        // refused or cut by the gateway, or closed by stop(): what was written is counted
      }
    }

    @Override
    public String check() {
      long complete = Arrays.stream(written).filter(w -> w >= LENGTH - 2).count();
      long total = Arrays.stream(written).sum();
      // A connection the gateway has answered is no longer held: its answer's status, read now that it is there.
      Statuses answered = new Statuses();
      for (Socket s : sockets) {
        try {
          if (s.getInputStream().available() > 0) {
            answered.add(RawHttp.status(s.getInputStream()));
          }
        } catch (IOException | RuntimeException e) {
          answered.add(0);
        }
      }
      return String.format(Locale.ROOT, "%d of %d bodies sent but for their last 2 bytes (%.0f MiB sent in all); the"
          + " gateway had answered %d connections by the phase's end (%s), the others were held",
          complete, CONNECTIONS, total / 1048576.0, answered.total(), answered);
    }

    @Override
    public void stop() throws InterruptedException {
      sockets.forEach(RawHttp::closeQuietly);
      for (Thread t : writers) {
        t.join(10_000);
      }
    }
  }
}
