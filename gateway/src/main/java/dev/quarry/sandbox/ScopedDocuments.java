package dev.quarry.sandbox;

import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.UUID;
import java.util.stream.Stream;

/**
 * The /documents directory of a scoped sandbox: only the scoped documents' directories, taken from
 * the tenant's DocumentsFs directory. Files are hard-linked where the file system allows (cheap, and
 * DocumentsFs replaces files by renaming, so a link is a stable snapshot) and copied otherwise.
 * It lives in the sandbox's run directory, so it goes with it on every path.
 */
final class ScopedDocuments {
  static final String DIR_NAME = "documents";

  private ScopedDocuments() {}

  /** Builds {@code runDir/documents} from {@code tenantDir}; returns it. */
  static Path build(Path tenantDir, Path runDir, Scope scope) throws IOException {
    Path target = runDir.resolve(DIR_NAME);
    Files.createDirectory(target);
    for (UUID id : scope.documentIds()) {
      Path source = tenantDir.resolve(id.toString());
      if (!Files.isDirectory(source)) {
        continue; // not (yet) exported, or not the tenant's: the sandbox sees nothing of it
      }
      Path dir = Files.createDirectory(target.resolve(id.toString()));
      try (Stream<Path> files = Files.list(source)) {
        for (Path f : files.filter(Files::isRegularFile).toList()) {
          linkOrCopy(f, dir.resolve(f.getFileName().toString()));
        }
      }
      Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    }
    // Only the gateway's user may change it (the sandbox's is another), yet it can still delete it.
    Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rwxr-xr-x"));
    return target;
  }

  private static void linkOrCopy(Path source, Path target) throws IOException {
    try {
      Files.createLink(target, source);
    } catch (FileSystemException | UnsupportedOperationException e) {
      Files.copy(source, target);
      Files.setPosixFilePermissions(target, PosixFilePermissions.fromString("rw-r--r--"));
    }
  }
}
