package dev.quarry.sandbox;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gateway's claim on its sandboxes: {@code <run root>/<gateway id>.lock}, locked (a POSIX record
 * lock) for as long as the gateway runs. The kernel drops the lock when the process ends, however it
 * ends (SIGKILL, out of memory), so a gateway sharing the run root that can take a lease's lock
 * knows that its gateway is gone, and may remove what it left ({@link Reaper}). A gateway whose run
 * root is not shared (another host) is never judged this way.
 */
final class GatewayLease {
  private static final Logger LOG = LoggerFactory.getLogger(GatewayLease.class);
  static final String SUFFIX = ".lock";
  /**
   * Leases this JVM holds: a JVM cannot lock a file twice, and must never open its own lease file
   * elsewhere (closing any descriptor of it would drop the process's lock).
   */
  private static final Map<Path, GatewayLease> HELD = new HashMap<>();

  private final Path file;
  private final FileChannel channel;
  private final FileLock lock;
  private int holders = 1;

  private GatewayLease(Path file, FileChannel channel, FileLock lock) {
    this.file = file;
    this.channel = channel;
    this.lock = lock;
  }

  static Path file(Path runRoot, String gatewayId) {
    return runRoot.resolve(gatewayId + SUFFIX);
  }

  /**
   * Takes this gateway's lease (blocking). Waits up to {@code wait} while someone else holds it:
   * another gateway's reaper for a moment, or a live gateway with the same {@code QUARRY_GATEWAY_ID},
   * which is then an error.
   */
  static GatewayLease acquire(Path runRoot, String gatewayId, Duration wait) {
    Path file = file(runRoot, gatewayId).toAbsolutePath().normalize();
    synchronized (HELD) {
      GatewayLease held = HELD.get(file);
      if (held != null) {
        held.holders++;
        return held;
      }
      try {
        Files.createDirectories(runRoot);
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
          long deadline = System.nanoTime() + wait.toNanos();
          FileLock lock;
          while ((lock = channel.tryLock()) == null) {
            if (System.nanoTime() > deadline) {
              throw new IllegalStateException("QUARRY_GATEWAY_ID=" + gatewayId + " is in use: " + file
                  + " is locked by another live gateway");
            }
            TimeUnit.MILLISECONDS.sleep(100);
          }
          // Touched through the locked channel itself: a POSIX lock is lost when the process closes any
          // descriptor of the file, which Files.setLastModifiedTime (futimens) would do.
          channel.truncate(0);
          channel.write(ByteBuffer.wrap(("gateway " + gatewayId + ", pid " + ProcessHandle.current().pid() + "\n")
              .getBytes(StandardCharsets.UTF_8)), 0);
          GatewayLease lease = new GatewayLease(file, channel, lock);
          HELD.put(file, lease);
          LOG.info("holding the gateway's lease {}", file);
          return lease;
        } catch (IOException | RuntimeException | InterruptedException e) {
          channel.close();
          throw e;
        }
      } catch (IOException e) {
        throw new ContainerException(ContainerException.Reason.HOST_IO, "cannot take the gateway's lease " + file, e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted while taking the gateway's lease " + file, e);
      }
    }
  }

  /** Gives the lease up (the last holder in this JVM deletes the file first). Idempotent per holder. */
  void release() {
    synchronized (HELD) {
      if (holders == 0 || --holders > 0) {
        return;
      }
      HELD.remove(file);
      try {
        Files.deleteIfExists(file);
        lock.release();
        channel.close();
      } catch (IOException e) {
        LOG.warn("could not release the gateway's lease {}: {}", file, e.getMessage());
      }
    }
  }

  /**
   * When the gateway of {@code leaseFile} is gone (the file is older than {@code grace}, so not one a
   * starting gateway has just made and not yet locked, and its lock is free), runs {@code reap}
   * holding the lock (so that no gateway of that id starts meanwhile) and deletes the file. Returns
   * whether it did. Blocking.
   */
  static boolean ifGone(Path leaseFile, Duration grace, Runnable reap) {
    Path file = leaseFile.toAbsolutePath().normalize();
    synchronized (HELD) {
      if (HELD.containsKey(file)) {
        return false;
      }
    }
    try {
      if (Files.getLastModifiedTime(file).toInstant().isAfter(Instant.now().minus(grace))) {
        return false;
      }
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
        FileLock lock;
        try {
          lock = channel.tryLock();
        } catch (OverlappingFileLockException e) {
          return false; // this JVM holds it: a live gateway
        }
        if (lock == null) {
          return false; // its gateway is alive (or another reaper is at it)
        }
        try {
          reap.run();
          Files.deleteIfExists(file);
        } finally {
          lock.release();
        }
        return true;
      }
    } catch (NoSuchFileException e) {
      return false; // released or reaped meanwhile
    } catch (IOException e) {
      LOG.warn("cannot check the gateway lease {}: {}", file, e.getMessage());
      return false;
    }
  }
}
