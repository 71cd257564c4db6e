package dev.quarry.sandbox;

import static dev.quarry.sandbox.SessionFixture.await;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ScratchMeasureTest {
  @TempDir Path tmp;

  static double p50(List<Double> xs) {
    List<Double> s = new ArrayList<>(xs);
    Collections.sort(s);
    return s.get(s.size() / 2);
  }

  @Test
  void measure() throws Exception {
    try (SessionFixture sf = new SessionFixture(tmp.resolve("a"), 0)) {
      List<Double> cold = new ArrayList<>();
      List<Double> cell = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        long t = System.nanoTime();
        SandboxSession s = await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple()));
        cold.add((System.nanoTime() - t) / 1e6);
        for (int j = 0; j < 10; j++) {
          long c = System.nanoTime();
          await(s.execute("1 + 1", sf.options(), null));
          cell.add((System.nanoTime() - c) / 1e6);
        }
        await(s.close());
      }
      System.out.printf("MEASURE cold open (create->Ready) p50 %.0f ms of %s%n", p50(cold), cold);
      System.out.printf("MEASURE trivial cell p50 %.2f ms (n=%d)%n", p50(cell), cell.size());
    }
    java.nio.file.Files.createDirectories(tmp.resolve("b"));
    try (SessionFixture sf = new SessionFixture(tmp.resolve("b"), 2)) {
      List<Double> warm = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        await(sf.service.warm(sf.fx.tenantA));
        long t = System.nanoTime();
        SandboxSession s = await(sf.service.open(sf.fx.tenantA, Scope.ALL, SessionFixture.Scripted.simple()));
        warm.add((System.nanoTime() - t) / 1e6);
        await(s.close());
      }
      System.out.printf("MEASURE warm acquire p50 %.2f ms of %s%n", p50(warm), warm);
    }
  }
}
