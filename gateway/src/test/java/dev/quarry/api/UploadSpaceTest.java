package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** The room uploads under way take on a replica's data volume, shared out between tenants. */
@Label("Room for uploads under way")
class UploadSpaceTest {
  private static final long MIB = 1 << 20;

  @net.jqwik.api.Example
  @Label("a tenant holds at most half; past it 429 naming its share, past all of it 503; room comes back when requests end")
  void shares() {
    UploadSpace space = new UploadSpace(100 * MIB, 50 * MIB);
    UUID noisy = UUID.randomUUID();
    UUID quiet = UUID.randomUUID();
    assertThat(space.reserve(noisy, 30 * MIB)).isNull();
    assertThat(space.reserve(noisy, 20 * MIB)).isNull();
    ApiError over = space.reserve(noisy, 1);
    assertThat(over.status()).isEqualTo(429);
    assertThat(over.getMessage()).contains("50 MiB").contains("QUARRY_UPLOAD_SPACE_MB");
    assertThat(space.reserve(quiet, 50 * MIB)).as("the other half is the quiet tenant's").isNull();
    assertThat(space.reserve(UUID.randomUUID(), 1).status()).isEqualTo(503);
    space.release(noisy, 30 * MIB);
    assertThat(space.reserve(UUID.randomUUID(), 30 * MIB)).isNull();
    assertThat(space.used()).isEqualTo(100 * MIB);
  }

  @net.jqwik.api.Example
  @Label("a body's room is its Content-Length, at most the largest upload; a chunked or malformed one reserves the largest")
  void bytesFor() {
    UploadSpace space = new UploadSpace(100 * MIB, 50 * MIB);
    assertThat(space.bytesFor("1000")).isEqualTo(1000);
    assertThat(space.bytesFor("0")).isEqualTo(1);
    assertThat(space.bytesFor(String.valueOf(60 * MIB))).isEqualTo(50 * MIB);
    assertThat(space.bytesFor(null)).isEqualTo(50 * MIB);
    assertThat(space.bytesFor("-5")).isEqualTo(50 * MIB);
    assertThat(space.bytesFor("99999999999999999999999")).isEqualTo(50 * MIB);
  }

  @Property(tries = 300)
  @Label("whatever the order of reservations and releases, no tenant holds more than half and all never more than the room")
  void neverOver(@ForAll @Size(max = 200) List<@IntRange(min = 0, max = 79) Integer> steps) {
    long total = 64 * MIB;
    UploadSpace space = new UploadSpace(total, 16 * MIB);
    UUID[] tenants = {UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID()};
    List<long[]> held = new ArrayList<>(); // tenant index, bytes
    long[] mine = new long[4];
    for (int step : steps) {
      int t = step % 4;
      if (step >= 60 && !held.isEmpty()) {
        long[] h = held.remove(step % held.size());
        space.release(tenants[(int) h[0]], h[1]);
        mine[(int) h[0]] -= h[1];
        continue;
      }
      long bytes = (1 + step % 16) * MIB;
      if (space.reserve(tenants[t], bytes) == null) {
        held.add(new long[] {t, bytes});
        mine[t] += bytes;
      }
      for (long m : mine) {
        assertThat(m).isLessThanOrEqualTo(total / 2);
      }
      assertThat(space.used()).isLessThanOrEqualTo(total).isEqualTo(java.util.Arrays.stream(mine).sum());
    }
  }
}
