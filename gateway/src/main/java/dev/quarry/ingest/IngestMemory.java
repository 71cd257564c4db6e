package dev.quarry.ingest;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * The memory all ingests under way may hold together ({@code QUARRY_INGEST_MEMORY_MB}). Before it
 * converts, an ingest reserves what its file may take ({@link IngestBudget#memoryFor}, which its
 * budget then holds it to) and keeps it until it is written; one whose share does not fit waits,
 * first come first served, without holding a worker. So a burst of large uploads waits for memory
 * instead of taking the heap the search copies and other tenants' work need. A share larger than
 * the whole is cut to the whole: that file then runs alone.
 */
public final class IngestMemory {
  private final long capacity;
  private long reserved;
  private final Deque<Waiter> waiting = new ArrayDeque<>();

  private record Waiter(long bytes, Promise<Reservation> promise) {}

  public IngestMemory(long capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive, got " + capacity);
    }
    this.capacity = capacity;
  }

  /** What an ingest holds of the memory until it closes the reservation (once; more is harmless). */
  public final class Reservation implements AutoCloseable {
    private final long bytes;
    private boolean closed;

    private Reservation(long bytes) {
      this.bytes = bytes;
    }

    public long bytes() {
      return bytes;
    }

    @Override
    public void close() {
      synchronized (IngestMemory.this) {
        if (closed) {
          return;
        }
        closed = true;
      }
      release(bytes);
    }
  }

  /** A reservation of {@code bytes} (at most the capacity), now when it fits and none waits, else later. */
  public Future<Reservation> reserve(long bytes) {
    long want = Math.max(0, Math.min(bytes, capacity));
    synchronized (this) {
      if (waiting.isEmpty() && reserved + want <= capacity) {
        reserved += want;
        return Future.succeededFuture(new Reservation(want));
      }
      Promise<Reservation> promise = Promise.promise();
      waiting.add(new Waiter(want, promise));
      return promise.future();
    }
  }

  private void release(long bytes) {
    List<Runnable> granted = new ArrayList<>();
    synchronized (this) {
      reserved -= bytes;
      while (!waiting.isEmpty() && reserved + waiting.peek().bytes() <= capacity) {
        Waiter w = waiting.poll();
        reserved += w.bytes();
        Reservation r = new Reservation(w.bytes());
        granted.add(() -> w.promise().complete(r));
      }
    }
    // Outside the lock: a waiter's continuation starts its conversion from here.
    granted.forEach(Runnable::run);
  }

  public synchronized long reserved() {
    return reserved;
  }

  public synchronized int waiting() {
    return waiting.size();
  }

  public long capacity() {
    return capacity;
  }
}
