package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Recent query vectors are reused, least recently used first out")
class QueryVectorCacheTest {
  private static final UUID A = UUID.randomUUID();
  private static final UUID B = UUID.randomUUID();
  private final List<String> embedded = new ArrayList<>();

  private float[] embed(String query) {
    embedded.add(query);
    return new float[] {query.length(), 1};
  }

  @Test
  @DisplayName("a repeated query is embedded once")
  void reuses() {
    QueryVectorCache cache = new QueryVectorCache(2);
    assertThat(cache.get(A, "abc", this::embed)).containsExactly(3f, 1f);
    assertThat(cache.get(A, "abc", this::embed)).containsExactly(3f, 1f);
    assertThat(embedded).containsExactly("abc");
  }

  @Test
  @DisplayName("past capacity the least recently used query goes")
  void evictsLeastRecentlyUsed() {
    QueryVectorCache cache = new QueryVectorCache(2);
    cache.get(A, "a", this::embed);
    cache.get(A, "bb", this::embed);
    cache.get(A, "a", this::embed);   // "bb" is now the least recently used
    cache.get(A, "ccc", this::embed);
    assertThat(cache.size()).isEqualTo(2);
    assertThat(cache.peek(A, "bb")).isNull();
    assertThat(cache.peek(A, "a")).isNotNull();
    assertThat(embedded).containsExactly("a", "bb", "ccc");
  }

  @Test
  @DisplayName("a caller changing its vector does not change the cached one")
  void handsOutCopies() {
    QueryVectorCache cache = new QueryVectorCache(4);
    cache.get(A, "abcd", this::embed)[0] = 99;
    cache.peek(A, "abcd")[1] = 99;
    assertThat(cache.get(A, "abcd", this::embed)).containsExactly(4f, 1f);
  }

  @Test
  @DisplayName("capacity 0 caches nothing; a negative one is refused")
  void capacity() {
    QueryVectorCache none = new QueryVectorCache(0);
    none.get(A, "x", this::embed);
    none.get(A, "x", this::embed);
    assertThat(embedded).containsExactly("x", "x");
    assertThatThrownBy(() -> new QueryVectorCache(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capacity");
  }

  @Test
  @DisplayName("one tenant's cached query is not another's (a hit answers sooner: shared, it would tell"
      + " a tenant what others searched); a deleted tenant's queries go")
  void perTenant() {
    QueryVectorCache cache = new QueryVectorCache(4);
    cache.get(A, "merger of acme", this::embed);
    assertThat(cache.peek(B, "merger of acme")).isNull();
    cache.get(B, "merger of acme", this::embed);
    assertThat(embedded).containsExactly("merger of acme", "merger of acme");
    cache.forget(A);
    assertThat(cache.peek(A, "merger of acme")).isNull();
    assertThat(cache.peek(B, "merger of acme")).isNotNull();
    assertThat(cache.size()).isEqualTo(1);
  }
}
