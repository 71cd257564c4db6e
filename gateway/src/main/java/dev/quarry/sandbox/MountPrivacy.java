package dev.quarry.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What a sandbox's {@code /proc/self/mountinfo} shows of a bind mount's source. For a bind mount the
 * kernel prints the source's path from the root of the filesystem it lives on (the mount's "root"
 * field), whatever path the mount was made from: a tenant directory under {@code /srv/quarry/data}
 * on the host's root filesystem shows as {@code /srv/quarry/data/documents/<tenant>}. Only a source
 * on a filesystem of its own whose root is one of the gateway's directories (a tmpfs, a volume
 * mounted there) shows nothing of the host: {@code /documents/<tenant>}.
 *
 * <p>A docker volume does not help: one of the local driver with {@code type=none, o=bind} is a bind
 * mount of the same directory and shows the same host path; a plain named volume shows the engine's
 * own {@code /var/lib/docker/volumes/<name>/_data}, and the gateway could not write into it.
 *
 * <p>Reads the gateway's own mountinfo: right where the engine resolves bind sources in the same
 * mounts as the gateway (the same host, or the same volumes at the same paths, as {@code k8s/} has).
 */
public final class MountPrivacy {
  private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

  /** What the gateway does at start when host paths would show: {@code QUARRY_SANDBOX_MOUNT_PRIVACY}. */
  public enum Policy {
    /** Refuse to start, naming the paths (a hosted API: set it in production). */
    REQUIRE,
    /** Start, with a warning in the log and {@code sandbox_mounts} failing in /readyz (advisory). */
    WARN;

    static Policy fromEnv(String value) {
      if (value == null || value.isBlank()) {
        return WARN;
      }
      return switch (value.strip()) {
        case "require" -> REQUIRE;
        case "warn" -> WARN;
        default -> throw new IllegalArgumentException(
            "QUARRY_SANDBOX_MOUNT_PRIVACY=" + value + " must be require or warn");
      };
    }
  }

  /** One line of mountinfo: the mount's root within its filesystem and where it is mounted. */
  record Mount(String root, Path mountPoint) {}

  private MountPrivacy() {}

  /** The path a sandbox's mountinfo would show for a bind mount of {@code source}. */
  public static String revealed(Path source) throws IOException {
    return revealed(source, mounts(Files.readAllLines(MOUNTINFO)));
  }

  static String revealed(Path source, List<Mount> mounts) throws IOException {
    Path real = source.toRealPath();
    Mount best = containing(real, mounts);
    if (best == null) {
      return real.toString();
    }
    Path below = best.mountPoint().relativize(real);
    String root = best.root().equals("/") ? "" : best.root();
    return below.toString().isEmpty() ? (root.isEmpty() ? "/" : root) : root + "/" + below;
  }

  /** The mount {@code real} lives in: the deepest mount point above it, the last of equal ones. */
  private static Mount containing(Path real, List<Mount> mounts) {
    Mount best = null;
    for (Mount m : mounts) {
      if (real.startsWith(m.mountPoint())
          && (best == null || m.mountPoint().getNameCount() >= best.mountPoint().getNameCount())) {
        best = m;
      }
    }
    return best;
  }

  /**
   * Null when bind mounts of {@code dir} and anything under it show no host path: {@code dir} is on
   * a filesystem of its own mounted at one of {@code boundaries} or below one (then what shows is
   * the path below that mount point). Otherwise the path a sandbox would see for {@code dir}.
   */
  public static String hostPathShown(Path dir, Path... boundaries) {
    try {
      List<Mount> mounts = mounts(Files.readAllLines(MOUNTINFO));
      Path real = dir.toRealPath();
      Mount m = containing(real, mounts);
      if (m != null && m.root().equals("/")) {
        for (Path boundary : boundaries) {
          if (m.mountPoint().startsWith(boundary.toRealPath())) {
            return null;
          }
        }
      }
      return revealed(dir, mounts);
    } catch (IOException | RuntimeException e) {
      return "unknown (" + e.getMessage() + ")";
    }
  }

  /**
   * Null when sandboxes of a gateway with these directories see no host path of them: the
   * documents root ({@code dataDir/documents}) and the run root each on a filesystem of its own
   * mounted at or below {@code dataDir} or the run root. Otherwise what would show, by setting.
   */
  public static String problem(Path dataDir, Path runRoot) {
    String docs = hostPathShown(dataDir.resolve("documents"), dataDir, runRoot);
    String run = hostPathShown(runRoot, runRoot, dataDir);
    if (docs == null && run == null) {
      return null;
    }
    return ((docs == null ? "" : "QUARRY_DATA_DIR shows as " + docs + " ")
        + (run == null ? "" : "QUARRY_SANDBOX_RUN_DIR shows as " + run)).strip();
  }

  static List<Mount> mounts(List<String> lines) {
    List<Mount> mounts = new ArrayList<>();
    for (String line : lines) {
      String[] f = line.split(" ");
      if (f.length > 5) {
        mounts.add(new Mount(unescape(f[3]), Path.of(unescape(f[4]))));
      }
    }
    return mounts;
  }

  /** mountinfo escapes space, tab, newline and backslash as octal. */
  private static String unescape(String s) {
    StringBuilder out = new StringBuilder();
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '\\' && i + 3 < s.length()) {
        try {
          out.append((char) Integer.parseInt(s.substring(i + 1, i + 4), 8));
          i += 3;
          continue;
        } catch (NumberFormatException | StringIndexOutOfBoundsException e) {
          // not an escape
        }
      }
      out.append(c);
    }
    return out.toString();
  }
}
