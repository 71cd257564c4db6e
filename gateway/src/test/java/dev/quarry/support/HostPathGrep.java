package dev.quarry.support;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Finds host paths in what a client was sent or an analysis stored: the gateway's configured roots
 * (as given and as the filesystem resolves them), the JVM's temporary, working and home directories,
 * and any path under the usual host prefixes. None of them means anything to a client, and each
 * tells an attacker about the host (the mount layout that mount privacy hides from sandboxes).
 */
public final class HostPathGrep {
  /** Prefixes of host paths no answer of Quarry's has a reason to hold. */
  public static final List<String> PREFIXES = List.of("/tmp/", "/var/", "/work/", "/home/", "/root/");

  private final Set<String> needles = new LinkedHashSet<>();

  public HostPathGrep(Path... roots) {
    List<Path> all = new ArrayList<>(List.of(roots));
    all.add(Path.of(System.getProperty("java.io.tmpdir")));
    all.add(Path.of(System.getProperty("user.dir")));
    all.add(Path.of(System.getProperty("user.home")));
    for (Path root : all) {
      add(root.toString());
      add(root.toAbsolutePath().normalize().toString());
      try {
        add(root.toRealPath().toString());
      } catch (java.io.IOException | RuntimeException e) {
        // not there (yet): its spelling as configured is still looked for
      }
    }
    needles.addAll(PREFIXES);
  }

  private void add(String path) {
    // "/" or "/tmp" alone would match every absolute path or word: the prefixes cover those.
    if (path.length() > 4 && !path.equals("/root")) {
      needles.add(path);
    }
  }

  /** The host paths (or prefixes) {@code text} contains; empty when none. */
  public List<String> in(String text) {
    if (text == null) {
      return List.of();
    }
    return needles.stream().filter(text::contains).toList();
  }
}
