package dev.quarry.sandbox;

import dev.quarry.sandbox.ContainerException.Reason;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code /documents} of scoped sandboxes: each a directory of its own inside the documents
 * filesystem, {@code <trees root>/.views/<gateway id>/<sandbox id>/<document id>/<file>}, every file a
 * hard link to the tenant's materialised one. So
 * <ul>
 *   <li>nothing is copied: a view holds no bytes, only its directories (one per document of the
 *       scope, at most {@code SearchRequest.MAX_DOCUMENT_IDS}) and links, and the sandboxes' run
 *       directory holds only their sockets;</li>
 *   <li>mount privacy holds: a bind mount of the view shows in the sandbox's mountinfo as its path
 *       from the documents filesystem's root, {@code /.views/<gateway>/<sandbox>}, nothing of the host;</li>
 *   <li>what the sandbox sees stays as it was when the view was built: the store never writes a
 *       file in place (it renames a new document directory into place and deletes the old one), so a
 *       link keeps the version it was made from, whole, while the document is replaced or deleted;</li>
 *   <li>the tenant's tree cannot be reached through it: it holds directories and regular files only,
 *       no symbolic link, and the mount's root is the view itself.</li>
 * </ul>
 * A version kept alive by a view (replaced or deleted since) takes its space in the documents
 * filesystem until the sandbox ends: at most the tenant's own tree once per sandbox it holds.
 *
 * <p>A view goes with its sandbox on every path: removed with the container, by a failed launch, and
 * by the {@link Reaper} when its sandbox is not alive (a crash) or its gateway is gone.
 */
final class ScopedViews {
  private static final Logger LOG = LoggerFactory.getLogger(ScopedViews.class);
  static final String DIR_NAME = ".views";
  private static final Pattern SAFE_NAME = Pattern.compile("[a-zA-Z0-9][a-zA-Z0-9_.-]{0,62}");

  private final Path root;
  private final String gatewayId;

  /** @param treesRoot the directory of the tenants' trees ({@link TenantTrees#root()}) */
  ScopedViews(Path treesRoot, String gatewayId) {
    this.root = treesRoot.toAbsolutePath().normalize().resolve(DIR_NAME);
    this.gatewayId = gatewayId;
  }

  /** {@code <trees root>/.views}. */
  Path root() {
    return root;
  }

  /** Where the view of this gateway's sandbox {@code sandboxId} is (or would be). */
  Path dir(String sandboxId) {
    return root.resolve(gatewayId).resolve(sandboxId);
  }

  /**
   * Builds the view of {@code scope} from the tenant's {@code tree} (blocking; run it where nothing
   * writes the tree, {@link TenantTrees#syncAnd()}). A document of the scope that is not in the tree
   * (not materialised yet, or not the tenant's) is not in the view. Fails, leaving nothing, when a
   * file cannot be linked.
   */
  Path build(Path tree, String sandboxId, Scope scope) {
    Path view = dir(sandboxId);
    try {
      Files.createDirectories(view.getParent());
      Files.createDirectory(view);
    } catch (IOException e) {
      throw new ContainerException(Reason.HOST_IO, "cannot create the scoped view " + view + ": " + e, e);
    }
    try {
      for (UUID id : scope.documentIds()) {
        Path source = tree.resolve(id.toString());
        if (!Files.isDirectory(source, LinkOption.NOFOLLOW_LINKS)) {
          continue;
        }
        Path dir = Files.createDirectory(view.resolve(id.toString()));
        try (Stream<Path> files = Files.list(source)) {
          for (Path file : files.filter(f -> Files.isRegularFile(f, LinkOption.NOFOLLOW_LINKS)).toList()) {
            Files.createLink(dir.resolve(file.getFileName().toString()), file);
          }
        }
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
      }
      // The sandbox's user (not the gateway's) reads it; only the gateway's may change it.
      Files.setPosixFilePermissions(view, PosixFilePermissions.fromString("rwxr-xr-x"));
      return view;
    } catch (IOException | UncheckedIOException | UnsupportedOperationException e) {
      ContainerException failure = new ContainerException(Reason.HOST_IO, "cannot link the scoped documents"
          + " into " + view + " (a view is made of hard links in the documents' own filesystem): " + e, e);
      try {
        delete(view);
      } catch (ContainerException cleanup) {
        failure.addSuppressed(cleanup);
      }
      throw failure;
    }
  }

  /** Removes this gateway's view of the sandbox, if it has one. Idempotent. */
  void remove(String sandboxId) {
    remove(gatewayId, sandboxId);
  }

  /** Removes the view of another gateway's sandbox (names that are not ids are left alone). */
  void remove(String gateway, String sandboxId) {
    if (SAFE_NAME.matcher(gateway).matches() && SAFE_NAME.matcher(sandboxId).matches()) {
      delete(root.resolve(gateway).resolve(sandboxId));
    }
  }

  /** Every view of a gateway that is gone, and its directory. */
  void removeGateway(String gateway) {
    if (SAFE_NAME.matcher(gateway).matches()) {
      delete(root.resolve(gateway));
    }
  }

  /**
   * The views of this gateway (of every gateway with {@code allGateways}) whose sandbox is not
   * {@code live}: their container is gone, or their launch never finished.
   */
  void removeOrphans(boolean allGateways, Predicate<String> live) {
    List<Path> gatewayDirs = allGateways ? children(root) : List.of(root.resolve(gatewayId));
    for (Path gatewayDir : gatewayDirs) {
      for (Path view : children(gatewayDir)) {
        if (!live.test(view.getFileName().toString())) {
          try {
            delete(view);
          } catch (ContainerException e) {
            LOG.warn("could not remove leftover scoped view {}: {}", view, e.getMessage());
          }
        }
      }
    }
  }

  /** Deletes a directory of directories and links without following any link. */
  private static void delete(Path dir) {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(dir)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | UncheckedIOException e) {
      throw new ContainerException(Reason.HOST_IO, "cannot delete the scoped view " + dir + ": " + e, e);
    }
  }

  private static List<Path> children(Path dir) {
    if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
      return List.of();
    }
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)).toList();
    } catch (IOException e) {
      LOG.warn("cannot list {}: {}", dir, e.getMessage());
      return List.of();
    }
  }
}
