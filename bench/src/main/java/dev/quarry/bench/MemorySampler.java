package dev.quarry.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Peak resident set size and peak JVM heap in use while a phase runs, sampled every 20 ms. The
 * process's own high-water mark (VmHWM) would include earlier phases of the same run.
 */
public final class MemorySampler implements AutoCloseable {
  private final Thread thread;
  private volatile boolean running = true;
  private volatile long peakRssKiB;
  private volatile long peakHeapBytes;

  public MemorySampler() {
    thread = Thread.ofPlatform().daemon().name("memory-sampler").start(() -> {
      while (running) {
        sample();
        try {
          Thread.sleep(20);
        } catch (InterruptedException e) {
          return;
        }
      }
    });
  }

  private void sample() {
    long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    peakHeapBytes = Math.max(peakHeapBytes, heap);
    peakRssKiB = Math.max(peakRssKiB, rssKiB());
  }

  static long rssKiB() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmRSS:")) {
          return Long.parseLong(line.replaceAll("\\D", ""));
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: RSS stays unknown (0)
    }
    return 0;
  }

  public double peakRssMiB() {
    return peakRssKiB / 1024.0;
  }

  public double peakHeapMiB() {
    return peakHeapBytes / (1024.0 * 1024.0);
  }

  @Override
  public void close() throws InterruptedException {
    sample();
    running = false;
    thread.interrupt();
    thread.join();
  }
}
