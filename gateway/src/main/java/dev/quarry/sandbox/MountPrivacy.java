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
 * <p>Reads the gateway's own mountinfo: right where the engine resolves bind sources in the same
 * mounts as the gateway (the same host, or the same volumes at the same paths, as {@code k8s/} has).
 */
public final class MountPrivacy {
  private static final Path MOUNTINFO = Path.of("/proc/self/mountinfo");

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
   * a filesystem of its own whose mount point is {@code boundary} or below it (then what shows is
   * the path below that mount point). Otherwise the path a sandbox would see for {@code dir}.
   */
  public static String hostPathShown(Path dir, Path boundary) {
    try {
      List<Mount> mounts = mounts(Files.readAllLines(MOUNTINFO));
      Path real = dir.toRealPath();
      Mount m = containing(real, mounts);
      if (m != null && m.root().equals("/") && m.mountPoint().startsWith(boundary.toRealPath())) {
        return null;
      }
      return revealed(dir, mounts);
    } catch (IOException | RuntimeException e) {
      return "unknown (" + e.getMessage() + ")";
    }
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
