package dev.quarry.search;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("Recent query vectors are reused, least recently used first out")
class QueryVectorCacheTest {
  private final List<String> embedded = new ArrayList<>();

  private float[] embed(String query) {
    embedded.add(query);
    return new float[] {query.length(), 1};
  }

  @Test
  @DisplayName("a repeated query is embedded once")
  void reuses() {
    QueryVectorCache cache = new QueryVectorCache(2);
    assertThat(cache.get("abc", this::embed)).containsExactly(3f, 1f);
    assertThat(cache.get("abc", this::embed)).containsExactly(3f, 1f);
    assertThat(embedded).containsExactly("abc");
  }

  @Test
  @DisplayName("past capacity the least recently used query goes")
  void evictsLeastRecentlyUsed() {
    QueryVectorCache cache = new QueryVectorCache(2);
    cache.get("a", this::embed);
    cache.get("bb", this::embed);
    cache.get("a", this::embed);   // "bb" is now the least recently used
    cache.get("ccc", this::embed);
    assertThat(cache.size()).isEqualTo(2);
    assertThat(cache.peek("bb")).isNull();
    assertThat(cache.peek("a")).isNotNull();
    assertThat(embedded).containsExactly("a", "bb", "ccc");
  }

  @Test
  @DisplayName("a caller changing its vector does not change the cached one")
  void handsOutCopies() {
    QueryVectorCache cache = new QueryVectorCache(4);
    cache.get("abcd", this::embed)[0] = 99;
    cache.peek("abcd")[1] = 99;
    assertThat(cache.get("abcd", this::embed)).containsExactly(4f, 1f);
  }

  @Test
  @DisplayName("capacity 0 caches nothing; a negative one is refused")
  void capacity() {
    QueryVectorCache none = new QueryVectorCache(0);
    none.get("x", this::embed);
    none.get("x", this::embed);
    assertThat(embedded).containsExactly("x", "x");
    assertThatThrownBy(() -> new QueryVectorCache(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("capacity");
  }
}
