package dev.quarry.api;

import io.vertx.core.Handler;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.RoutingContext;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The room this replica's uploads take on its data volume, shared out between tenants. An upload
 * (`POST /v1/documents`) reserves what its body may write to `QUARRY_DATA_DIR/uploads` before the
 * body is read: its Content-Length, or the largest upload when it is chunked. The reservation is
 * held until the request ends (the file is deleted by then, on every path). All of them together
 * hold at most {@code QUARRY_UPLOAD_SPACE_MB}, one tenant at most half of it, so that one tenant's
 * held bodies cannot fill the volume another tenant's uploads need (red team round 8: 32 bodies of
 * 49 MiB held 1.55 GiB of a 2 GiB volume). The volume is the replica's own, so the count is too.
 */
final class UploadSpace {
  private final long total;
  private final long perTenant;
  private final long largest;
  private final Map<UUID, Long> held = new HashMap<>();
  private long used;

  UploadSpace(long totalBytes, long largestUpload) {
    if (totalBytes < 1 || largestUpload < 1) {
      throw new IllegalArgumentException("upload space and largest upload must be positive");
    }
    this.total = totalBytes;
    this.perTenant = Math.max(1, totalBytes / 2);
    this.largest = largestUpload;
  }

  /** What a request's body may take: its declared length (at most the largest upload), else the largest. */
  long bytesFor(String contentLength) {
    if (contentLength != null && contentLength.matches("[0-9]{1,18}")) {
      return Math.max(1, Math.min(largest, Long.parseLong(contentLength)));
    }
    return largest;
  }

  /** Null when reserved; else the refusal. */
  synchronized ApiError reserve(UUID tenant, long bytes) {
    long mine = held.getOrDefault(tenant, 0L);
    if (mine + bytes > perTenant) {
      return new ApiError(429, "too_many_uploads", "this API key's tenant is already sending or ingesting "
          + mib(mine) + " MiB of uploads on this gateway, and this one may take " + mib(bytes) + " MiB more: a tenant"
          + " may hold " + mib(perTenant) + " MiB at once (half of QUARRY_UPLOAD_SPACE_MB); send it when one has been"
          + " ingested");
    }
    if (used + bytes > total) {
      return new ApiError(503, "uploads_busy", "the gateway's room for uploads (" + mib(total)
          + " MiB, QUARRY_UPLOAD_SPACE_MB) is taken by uploads under way; send it again shortly");
    }
    held.merge(tenant, bytes, Long::sum);
    used += bytes;
    return null;
  }

  synchronized void release(UUID tenant, long bytes) {
    held.computeIfPresent(tenant, (t, b) -> b - bytes <= 0 ? null : b - bytes);
    used = Math.max(0, used - bytes);
  }

  synchronized long used() {
    return used;
  }

  /** Before the body is read: reserves the upload's room until the request ends, or refuses it. */
  Handler<RoutingContext> take() {
    return ctx -> {
      UUID tenant = ApiRoutes.tenant(ctx);
      long bytes = bytesFor(ctx.request().getHeader(HttpHeaders.CONTENT_LENGTH));
      ApiError refused = reserve(tenant, bytes);
      if (refused != null) {
        if (refused.status() == 503) {
          ctx.response().putHeader("Retry-After", "5");
        }
        ctx.fail(refused);
        return;
      }
      AtomicBoolean out = new AtomicBoolean(true);
      ctx.addEndHandler(v -> {
        if (out.compareAndSet(true, false)) {
          release(tenant, bytes);
        }
      });
      ctx.next();
    };
  }

  private static long mib(long bytes) {
    return (bytes + (1 << 20) - 1) >> 20;
  }
}
