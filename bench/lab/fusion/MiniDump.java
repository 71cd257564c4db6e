import dev.quarry.bench.*;
import dev.quarry.search.OnnxEmbedder;
import java.nio.file.*;
import java.util.*;
/** Embeds the three collections with a second model (argument: its name) into the bench's vector cache. */
public class MiniDump {
  public static void main(String[] a) throws Exception {
    Path root = BenchPaths.detect().retrieval();
    Path dir = BenchPaths.detect().work().resolve("embeddings");
    var embedder = new OnnxEmbedder(a.length > 0 ? a[0] : OnnxEmbedder.MINILM);
    for (TestCollection c : List.of(TestCollections.vaswani(root), TestCollections.cranfield(root), TestCollections.msmarco(root))) {
      var v = VectorCache.load(dir, c, embedder);
      System.out.printf("%s: %d docs, %.0f s%n", c.name(), v.docs().size(), v.embedSeconds());
    }
  }
}
