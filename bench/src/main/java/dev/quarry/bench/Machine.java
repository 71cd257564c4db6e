package dev.quarry.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

/** What the figures were measured on: they mean little without it. */
public record Machine(int cpus, String cpuModel, long memoryMiB, String date, String jvm) {

  public static Machine describe() {
    String model = "unknown";
    long memKiB = 0;
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          model = line.substring(line.indexOf(':') + 1).trim();
          break;
        }
      }
      for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
        if (line.startsWith("MemTotal:")) {
          memKiB = Long.parseLong(line.replaceAll("\\D", ""));
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: say unknown rather than fail the run
    }
    return new Machine(Runtime.getRuntime().availableProcessors(), model, memKiB / 1024,
        ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME.withZone(ZoneOffset.UTC)),
        System.getProperty("java.vm.name") + " " + Runtime.version().toString());
  }

  public String markdown(String command) {
    return "- machine: " + cpus + " CPUs (nproc), " + cpuModel + ", " + memoryMiB + " MiB memory\n"
        + "- date: " + date + "\n"
        + "- JVM: " + jvm + "\n"
        + "- command: `" + command + "`\n";
  }
}
