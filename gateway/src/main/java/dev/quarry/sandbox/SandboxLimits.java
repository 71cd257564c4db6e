package dev.quarry.sandbox;

import dev.quarry.config.Settings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The resource limits of one sandbox. {@link #DEFAULTS} apply when nothing else is asked for;
 * {@link #MAXIMUMS} is the most any configuration or request may raise them to. Memory and
 * memory+swap are one number on purpose: a sandbox that could swap would stay alive, slowly, long
 * past its memory limit instead of being OOM-killed and reported.
 *
 * @param memoryBytes   memory limit, also used as memory+swap (no swap at all)
 * @param nanoCpus      CPU quota in billionths of a CPU (1_000_000_000 = one full core)
 * @param pidsLimit     processes and threads the container may hold at once (fork bombs stop here)
 * @param nofile        open file descriptors per process (soft = hard)
 * @param tmpfsBytes    size of the writable {@code /tmp}, the only writable place besides the socket dir
 * @param cellWallTime  wall-clock time one cell may run before it is cancelled
 * @param outputChars   characters of printed output kept per cell before truncation
 */
public record SandboxLimits(
    long memoryBytes,
    long nanoCpus,
    long pidsLimit,
    long nofile,
    long tmpfsBytes,
    Duration cellWallTime,
    int outputChars) {

  private static final long MIB = 1024L * 1024;

  public static final SandboxLimits DEFAULTS =
      new SandboxLimits(256 * MIB, 1_000_000_000L, 64, 256, 16 * MIB, Duration.ofSeconds(30), 50_000);

  public static final SandboxLimits MAXIMUMS =
      new SandboxLimits(4096 * MIB, 2_000_000_000L, 1024, 4096, 512 * MIB, Duration.ofMinutes(10), 1_000_000);

  /** Below these Docker refuses the container or the runner cannot even start. */
  private static final SandboxLimits MINIMUMS =
      new SandboxLimits(16 * MIB, 10_000_000L, 8, 32, MIB, Duration.ofMillis(100), 100);

  public SandboxLimits {
    if (cellWallTime == null) {
      throw new IllegalArgumentException("cellWallTime is required");
    }
  }

  /** Fails naming every limit that is below the minimum or above {@code maximums}. */
  public SandboxLimits requireWithin(SandboxLimits maximums) {
    List<String> problems = new ArrayList<>();
    check(problems, "memoryBytes", memoryBytes, MINIMUMS.memoryBytes, maximums.memoryBytes);
    check(problems, "nanoCpus", nanoCpus, MINIMUMS.nanoCpus, maximums.nanoCpus);
    check(problems, "pidsLimit", pidsLimit, MINIMUMS.pidsLimit, maximums.pidsLimit);
    check(problems, "nofile", nofile, MINIMUMS.nofile, maximums.nofile);
    check(problems, "tmpfsBytes", tmpfsBytes, MINIMUMS.tmpfsBytes, maximums.tmpfsBytes);
    check(problems, "cellWallTime(ms)", cellWallTime.toMillis(), MINIMUMS.cellWallTime.toMillis(),
        maximums.cellWallTime.toMillis());
    check(problems, "outputChars", outputChars, MINIMUMS.outputChars, maximums.outputChars);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException("sandbox limits out of bounds: " + String.join("; ", problems));
    }
    return this;
  }

  private static void check(List<String> problems, String name, long value, long min, long max) {
    if (value < min || value > max) {
      problems.add(name + "=" + value + " not in [" + min + ", " + max + "]");
    }
  }

  public SandboxLimits withMemoryBytes(long bytes) {
    return new SandboxLimits(bytes, nanoCpus, pidsLimit, nofile, tmpfsBytes, cellWallTime, outputChars);
  }

  public SandboxLimits withCellWallTime(Duration wallTime) {
    return new SandboxLimits(memoryBytes, nanoCpus, pidsLimit, nofile, tmpfsBytes, wallTime, outputChars);
  }

  public SandboxLimits withPidsLimit(long pids) {
    return new SandboxLimits(memoryBytes, nanoCpus, pids, nofile, tmpfsBytes, cellWallTime, outputChars);
  }

  /**
   * Reads {@code QUARRY_SANDBOX_*} limits (memory in MiB, CPUs in milli-CPUs, tmpfs in MiB, wall
   * time in seconds) over {@link #DEFAULTS}; a malformed one, or one outside [minimum,
   * {@link #MAXIMUMS}], fails with {@code InvalidSetting} naming the variable.
   */
  public static SandboxLimits fromEnv(Map<String, String> values) {
    return read(new Settings(values), (int) MAXIMUMS.cellWallTime.toSeconds());
  }

  /** @param maxCellSeconds {@code QUARRY_SANDBOX_MAX_CELL_SECONDS}, the bound of the cell wall time */
  public static SandboxLimits read(Settings s, int maxCellSeconds) {
    return new SandboxLimits(
        s.longInteger("QUARRY_SANDBOX_MEMORY_MIB", DEFAULTS.memoryBytes / MIB, MINIMUMS.memoryBytes / MIB,
            MAXIMUMS.memoryBytes / MIB) * MIB,
        s.longInteger("QUARRY_SANDBOX_MILLI_CPUS", DEFAULTS.nanoCpus / 1_000_000, MINIMUMS.nanoCpus / 1_000_000,
            MAXIMUMS.nanoCpus / 1_000_000) * 1_000_000,
        s.longInteger("QUARRY_SANDBOX_PIDS", DEFAULTS.pidsLimit, MINIMUMS.pidsLimit, MAXIMUMS.pidsLimit),
        s.longInteger("QUARRY_SANDBOX_NOFILE", DEFAULTS.nofile, MINIMUMS.nofile, MAXIMUMS.nofile),
        s.longInteger("QUARRY_SANDBOX_TMPFS_MIB", DEFAULTS.tmpfsBytes / MIB, MINIMUMS.tmpfsBytes / MIB,
            MAXIMUMS.tmpfsBytes / MIB) * MIB,
        Duration.ofSeconds(s.integerUpTo("QUARRY_SANDBOX_CELL_SECONDS", (int) DEFAULTS.cellWallTime.toSeconds(), 1,
            "QUARRY_SANDBOX_MAX_CELL_SECONDS", maxCellSeconds)),
        (int) s.longInteger("QUARRY_SANDBOX_OUTPUT_CHARS", DEFAULTS.outputChars, MINIMUMS.outputChars,
            MAXIMUMS.outputChars));
  }
}
