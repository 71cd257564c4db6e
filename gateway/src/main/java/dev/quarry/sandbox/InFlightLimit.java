package dev.quarry.sandbox;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.Consumer;

/**
 * At most {@code limit} tasks running at once; the others wait their turn, first come first
 * served. A task is started with {@link #enter} and must call {@link #leave} exactly once when it
 * is done. While {@link #pause paused}, nothing new starts (what runs finishes).
 *
 * <p>A task whose turn comes when another leaves is started through {@code executor} (an event
 * loop), never inside {@code leave}: a long queue of tasks that finish at once would otherwise
 * start each other on one ever deeper stack.
 */
final class InFlightLimit {
  private final int limit;
  private final Consumer<Runnable> executor;
  private final Deque<Runnable> waiting = new ArrayDeque<>();
  private int running;
  private boolean paused;

  InFlightLimit(int limit, Consumer<Runnable> executor) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit " + limit + " must be at least 1");
    }
    this.limit = limit;
    this.executor = executor;
  }

  /** Starts {@code task} now when there is room, else queues it. */
  void enter(Runnable task) {
    synchronized (this) {
      if (paused || running >= limit) {
        waiting.addLast(task);
        return;
      }
      running++;
    }
    task.run();
  }

  /** A task is done: the next waiting one, if any, takes its place. */
  void leave() {
    Runnable next;
    synchronized (this) {
      next = paused ? null : waiting.pollFirst();
      if (next == null) {
        running--;
        return;
      }
    }
    executor.accept(next);
  }

  /** Nothing new starts until {@link #resume}. */
  synchronized void pause() {
    paused = true;
  }

  /** Starts waiting tasks up to the limit again. */
  void resume() {
    while (true) {
      Runnable next;
      synchronized (this) {
        paused = false;
        if (running >= limit || waiting.isEmpty()) {
          return;
        }
        running++;
        next = waiting.pollFirst();
      }
      executor.accept(next);
    }
  }

  /** Forgets every waiting task (they will never run) and says how many there were. */
  synchronized int clear() {
    int n = waiting.size();
    waiting.clear();
    return n;
  }

  synchronized int running() {
    return running;
  }

  synchronized int waiting() {
    return waiting.size();
  }
}
