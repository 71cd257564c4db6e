import dev.quarry.bench.*;
import dev.quarry.search.OnnxEmbedder;
import java.io.*;
import java.nio.file.*;
import java.util.*;
public class QDump {
  public static void main(String[] a) throws Exception {
    Path root = BenchPaths.detect().retrieval();
    OnnxEmbedder m = new OnnxEmbedder();
    for (TestCollection c : List.of(TestCollections.vaswani(root), TestCollections.cranfield(root), TestCollections.msmarco(root))) {
      List<String> texts = c.queries().stream().map(TestCollection.Query::text).toList();
      List<float[]> v = m.embedPassages(texts);
      try (DataOutputStream out = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(BenchPaths.detect().work().resolve("fusion-lab") + "/" + c.name() + ".qnoprefix")))) {
        for (float[] x : v) for (float f : x) out.writeFloat(f);
      }
    }
  }
}
