import dev.quarry.bench.*;
import java.nio.file.*;
import java.util.*;
public class Dump {
  public static void main(String[] a) throws Exception {
    Path root = BenchPaths.detect().retrieval();
    Files.createDirectories(BenchPaths.detect().work().resolve("fusion-lab"));
    for (TestCollection c : List.of(TestCollections.vaswani(root), TestCollections.cranfield(root), TestCollections.msmarco(root))) {
      StringBuilder d = new StringBuilder();
      for (var doc : c.docs()) d.append(doc.id()).append('\n');
      Files.writeString(Path.of(BenchPaths.detect().work().resolve("fusion-lab") + "/" + c.name() + ".docs"), d);
      StringBuilder q = new StringBuilder();
      for (var qq : c.queries()) q.append(qq.id()).append('\t').append(qq.text().replace('\t',' ')).append('\n');
      Files.writeString(Path.of(BenchPaths.detect().work().resolve("fusion-lab") + "/" + c.name() + ".queries"), q);
      StringBuilder d2 = new StringBuilder();
      for (var doc : c.docs()) d2.append(doc.id()).append('\t').append(doc.text().replace('\t',' ')).append('\n');
      Files.writeString(Path.of(BenchPaths.detect().work().resolve("fusion-lab") + "/" + c.name() + ".texts"), d2);
    }
  }
}
