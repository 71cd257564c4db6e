package dev.quarry.api;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.Set;

/**
 * Other ways to write a path that a lenient server (or the router's normaliser) might take for the
 * same one, or for another route: percent-escapes of any character, dot segments (plain and
 * escaped), doubled and trailing slashes, escaped and back slashes, case changes, and random mixes.
 */
final class PathSpellings {
  /** How a spelling must be treated: refused as non-canonical, or routed as the plain path would be. */
  enum Kind { NON_CANONICAL, CASE_CHANGED }

  record Spelling(Kind kind, String path, String how) {}

  private PathSpellings() {}

  /** Every systematic spelling of {@code path} (which has at least one segment), then {@code random} mixes. */
  static List<Spelling> of(String path, Random random, int randomMixes) {
    List<Spelling> out = new ArrayList<>();
    Set<String> seen = new LinkedHashSet<>(List.of(path));
    if (path.equals("/")) {
      return root(out, seen);
    }
    String[] segments = path.substring(1).split("/");
    add(out, seen, Kind.NON_CANONICAL, path + "/", "trailing slash");
    add(out, seen, Kind.NON_CANONICAL, "/" + path, "leading double slash");
    for (int i = 0; i < path.length(); i++) {
      char c = path.charAt(i);
      if (c == '/') {
        if (i > 0) {
          add(out, seen, Kind.NON_CANONICAL, path.substring(0, i) + "/" + path.substring(i), "doubled slash at " + i);
          for (String slash : List.of("%2f", "%2F", "%5c", "%5C", "\\", "%252f")) {
            add(out, seen, Kind.NON_CANONICAL, path.substring(0, i) + slash + path.substring(i + 1), slash + " at " + i);
          }
        }
      } else {
        add(out, seen, Kind.NON_CANONICAL, path.substring(0, i) + escape(c, i % 2 == 0) + path.substring(i + 1),
            "escaped '" + c + "' at " + i);
      }
    }
    for (int s = 0; s <= segments.length; s++) {
      String before = "/" + String.join("/", List.of(segments).subList(0, s));
      String after = String.join("/", List.of(segments).subList(s, segments.length));
      String head = s == 0 ? "" : before;
      String tail = after.isEmpty() ? "" : "/" + after;
      for (String dot : List.of(".", "%2e", "%2E")) {
        add(out, seen, Kind.NON_CANONICAL, head + "/" + dot + tail, "'" + dot + "' segment after " + s);
      }
      for (String dots : List.of("..", "%2e%2e", "%2E%2E", ".%2e", "%2e.", "%252e%252e")) {
        add(out, seen, Kind.NON_CANONICAL, head + "/documents/" + dots + tail, "'documents/" + dots + "' after " + s);
        add(out, seen, Kind.NON_CANONICAL, head + "/admin/" + dots + tail, "'admin/" + dots + "' after " + s);
      }
    }
    for (String odd : List.of(";x", "%00", "%20", "%23", "%3f", "é", ":", "@", "+", "!", "*")) {
      add(out, seen, Kind.NON_CANONICAL, "/" + segments[0] + odd + path.substring(1 + segments[0].length()),
          "'" + odd + "' in the first segment");
    }
    add(out, seen, Kind.CASE_CHANGED, path.toUpperCase(Locale.ROOT), "upper case");
    for (int s = 0; s < segments.length; s++) {
      String[] changed = segments.clone();
      changed[s] = changed[s].substring(0, 1).toUpperCase(Locale.ROOT) + changed[s].substring(1);
      add(out, seen, Kind.CASE_CHANGED, "/" + String.join("/", changed), "capitalised segment " + s);
    }
    for (int n = 0; n < randomMixes; n++) {
      String mixed = path;
      StringBuilder how = new StringBuilder("mix:");
      for (int step = 1 + random.nextInt(3); step > 0; step--) {
        mixed = mutate(mixed, random, how);
      }
      if (!mixed.equals(path) && Authentication.whyNotCanonical(mixed) != null) {
        add(out, seen, Kind.NON_CANONICAL, mixed, how.toString());
      }
    }
    return out;
  }

  /** The root (the console's page) has no segment to escape or capitalise: its other spellings. */
  private static List<Spelling> root(List<Spelling> out, Set<String> seen) {
    for (String other : List.of("//", "/.", "/..", "/%2e", "/%2e%2e", "/%2f", "/%5c", "/\\", "/%00", "/%20",
        "/;x", "/%3f", "/documents/..", "/admin/%2e%2e", "/./", "///")) {
      add(out, seen, Kind.NON_CANONICAL, other, "the root as '" + other + "'");
    }
    return out;
  }

  private static void add(List<Spelling> out, Set<String> seen, Kind kind, String path, String how) {
    if (seen.add(path)) {
      out.add(new Spelling(kind, path, how));
    }
  }

  /** One random change; the path may stop being a path (that is the point). */
  private static String mutate(String path, Random r, StringBuilder how) {
    int at = 1 + r.nextInt(Math.max(1, path.length() - 1));
    return switch (r.nextInt(6)) {
      case 0 -> {
        how.append(" escape@").append(at);
        yield path.substring(0, at) + escape(path.charAt(at), r.nextBoolean()) + path.substring(at + 1);
      }
      case 1 -> {
        how.append(" dot@").append(at);
        int slash = path.indexOf('/', at);
        yield slash < 0 ? path + "/." : path.substring(0, slash) + "/." + path.substring(slash);
      }
      case 2 -> {
        how.append(" dotdot@").append(at);
        int slash = path.indexOf('/', at);
        String dots = r.nextBoolean() ? "/x/.." : "/x/%2e%2e";
        yield slash < 0 ? path + dots : path.substring(0, slash) + dots + path.substring(slash);
      }
      case 3 -> {
        how.append(" slash@").append(at);
        yield path.substring(0, at) + (r.nextBoolean() ? "/" : "%2f") + path.substring(at);
      }
      case 4 -> {
        how.append(" backslash@").append(at);
        yield path.substring(0, at) + (r.nextBoolean() ? "\\" : "%5c") + path.substring(at);
      }
      default -> {
        how.append(" case@").append(at);
        char c = path.charAt(at);
        yield path.substring(0, at) + (Character.isUpperCase(c) ? Character.toLowerCase(c) : Character.toUpperCase(c))
            + path.substring(at + 1);
      }
    };
  }

  private static String escape(char c, boolean upper) {
    String hex = String.format("%%%02x", (int) c);
    return upper ? hex.toUpperCase(Locale.ROOT) : hex;
  }
}
