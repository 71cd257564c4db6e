package dev.quarry.config;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Keeps the host's paths out of what a client is told and what an analysis stores: a message that
 * holds the data directory, the sandboxes' run directory, the JVM's temporary, home or working
 * directory, or any absolute path under a usual host prefix ({@code /tmp/}, {@code /var/},
 * {@code /home/}, …) has each replaced by a neutral token ({@code <QUARRY_DATA_DIR>},
 * {@code <host path>}). Those paths mean nothing to a client, and they tell an attacker the host's
 * layout, which mount privacy hides from sandboxes (README, Security).
 *
 * <p>Messages are built without host paths where they are made (from the document id, the
 * sandbox-relative path, a filesystem error's reason: {@link #reason}); {@link #redact} is the
 * second fence, at the boundaries every message to a client or to an analysis' record passes: the
 * API's one error mapping, an analysis' outcome, the MCP transport's errors, the readiness report.
 *
 * <p>The roots are the process's: the composition root {@link #protect}s the configured ones as it
 * starts, the JVM's are protected from the first use. They are kept here rather than passed down
 * because the boundaries that read them are the static error mapping and the agent's record of an
 * outcome, and because a root one gateway of a JVM protects (tests run several) is a path of that
 * host for every other.
 */
public final class HostPaths {
  /** The token for a host path that is none of the named roots. */
  public static final String HOST_PATH = "<host path>";

  /** A root and the token that stands for it. */
  private record Root(String path, String token, Pattern pattern) {}

  /** The protected roots, longest first (so a root inside another keeps its own name); replaced whole. */
  private static volatile List<Root> roots = List.of();

  /**
   * An absolute path under a directory no client-facing message has a reason to name. Not after a
   * path character (so the tail of a URL or of another path is not cut out of it); it runs to the
   * first character that does not belong to a path. {@code /documents} (the sandbox's view) and
   * the API's own paths are not host paths.
   */
  private static final Pattern HOST_PREFIXED = Pattern.compile("(?<![\\w.~/-])/(?:tmp|var|home|root|work|workspace"
      + "|srv|mnt|opt|data|proc|sys|etc|usr|media|run|private|Users|nix|dev|lib|lib64|snap|boot)(?:/[^\\s'\"<>,;()"
      + "\\[\\]{}`]*)?(?![\\w.~-])");

  static {
    protect("the temporary directory", Path.of(System.getProperty("java.io.tmpdir")));
    protect("the home directory", Path.of(System.getProperty("user.home")));
    protect("the working directory", Path.of(System.getProperty("user.dir")));
  }

  private HostPaths() {}

  /**
   * Protects {@code root} under the name of its setting: every spelling of it (as configured, as
   * an absolute path, as the filesystem resolves it) is replaced by {@code <setting>}.
   */
  public static synchronized void protect(String setting, Path root) {
    String token = setting.startsWith("the ") ? "<" + setting.substring(4) + ">" : "<" + setting + ">";
    List<String> spellings = new ArrayList<>();
    spellings.add(root.toString());
    spellings.add(root.toAbsolutePath().normalize().toString());
    try {
      spellings.add(root.toRealPath().toString());
    } catch (IOException | RuntimeException e) {
      // not there yet: its other spellings still count
    }
    List<Root> next = new ArrayList<>(roots);
    for (String s : spellings) {
      // "/" or "." would match every path or word: the generic prefixes cover what they hold.
      if (s.length() < 2 || s.equals("/") || s.equals(".") || next.stream().anyMatch(r -> r.path().equals(s))) {
        continue;
      }
      next.add(new Root(s, token, Pattern.compile("(?<![\\w.~/-])" + Pattern.quote(s) + "(?![\\w.~-])")));
    }
    next.sort(Comparator.comparingInt((Root r) -> r.path().length()).reversed());
    roots = List.copyOf(next);
  }

  /** {@code message} with every host path replaced by its token; null stays null. */
  public static String redact(String message) {
    if (message == null || message.indexOf('/') < 0) {
      return message;
    }
    String out = message;
    for (Root root : roots) {
      if (out.contains(root.path())) {
        out = root.pattern().matcher(out).replaceAll(Matcher.quoteReplacement(root.token()));
      }
    }
    return HOST_PREFIXED.matcher(out).replaceAll(Matcher.quoteReplacement(HOST_PATH));
  }

  /** Whether {@code message} holds a host path that {@link #redact} would replace. */
  public static boolean holdsHostPath(String message) {
    return message != null && !message.equals(redact(message));
  }

  /**
   * What a client may be told of a filesystem failure: its reason ("No space left on device",
   * "Permission denied", "Read-only file system") without the paths a {@link FileSystemException}'s
   * message starts with; for another failure its redacted message, else its kind.
   */
  public static String reason(Throwable e) {
    if (e instanceof FileSystemException fs) {
      String why = fs.getReason();
      return why != null ? why : switch (fs) {
        case java.nio.file.NoSuchFileException x -> "no such file or directory";
        case java.nio.file.FileAlreadyExistsException x -> "it already exists";
        case java.nio.file.AccessDeniedException x -> "permission denied";
        case java.nio.file.DirectoryNotEmptyException x -> "directory not empty";
        case java.nio.file.NotDirectoryException x -> "not a directory";
        default -> fs.getClass().getSimpleName();
      };
    }
    if ((e instanceof java.io.UncheckedIOException || e instanceof java.util.concurrent.ExecutionException
        || e instanceof java.util.concurrent.CompletionException) && e.getCause() != null) {
      return reason(e.getCause());
    }
    String m = e.getMessage();
    return m == null ? e.getClass().getSimpleName() : redact(m);
  }
}
