package dev.quarry.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("IngestMemory: ingests whose share does not fit wait, first come first served")
class IngestMemoryTest {
  @Test
  @DisplayName("shares that fit are granted at once; the next waits until enough is released, in order")
  void waitsInOrder() {
    IngestMemory memory = new IngestMemory(100);
    IngestMemory.Reservation a = memory.reserve(60).result();
    IngestMemory.Reservation b = memory.reserve(40).result();
    assertThat(memory.reserved()).isEqualTo(100);
    Future<IngestMemory.Reservation> big = memory.reserve(70);
    Future<IngestMemory.Reservation> small = memory.reserve(10);
    assertThat(big.isComplete()).isFalse();
    // First come first served: the small one does not pass the big one that waits before it.
    assertThat(small.isComplete()).isFalse();
    assertThat(memory.waiting()).isEqualTo(2);
    b.close();
    assertThat(big.isComplete()).as("60 held, 70 wanted").isFalse();
    a.close();
    assertThat(big.result().bytes()).isEqualTo(70);
    assertThat(small.result().bytes()).isEqualTo(10);
    assertThat(memory.reserved()).isEqualTo(80);
    a.close(); // twice is harmless
    assertThat(memory.reserved()).isEqualTo(80);
    big.result().close();
    small.result().close();
    assertThat(memory.reserved()).isZero();
    assertThat(memory.waiting()).isZero();
  }

  @Test
  @DisplayName("a share larger than the whole is cut to the whole: that file runs alone")
  void oversizeRunsAlone() {
    IngestMemory memory = new IngestMemory(100);
    IngestMemory.Reservation alone = memory.reserve(1_000).result();
    assertThat(alone.bytes()).isEqualTo(100);
    Future<IngestMemory.Reservation> next = memory.reserve(1);
    assertThat(next.isComplete()).isFalse();
    alone.close();
    assertThat(next.result().bytes()).isEqualTo(1);
  }

  @Test
  @DisplayName("under a burst, what is reserved never passes the capacity, and every ingest gets its turn")
  void burstStaysWithin() {
    IngestMemory memory = new IngestMemory(256);
    List<Future<IngestMemory.Reservation>> all = new ArrayList<>();
    long max = 0;
    for (int i = 0; i < 50; i++) {
      all.add(memory.reserve(32 + (i * 37) % 100));
      max = Math.max(max, memory.reserved());
    }
    // Ingests end in the order they started: each one's end lets the next ones in.
    for (Future<IngestMemory.Reservation> f : all) {
      assertThat(f.isComplete()).as("granted once all before it ended").isTrue();
      max = Math.max(max, memory.reserved());
      f.result().close();
    }
    assertThat(max).isLessThanOrEqualTo(256);
    assertThat(memory.reserved()).isZero();
    assertThat(memory.waiting()).isZero();
  }
}
