package dev.quarry.sandbox;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.nio.file.Path;
import java.util.UUID;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Where sandboxes' {@code /documents} come from: the tenants' trees the store materialises
 * ({@code DocumentsFs}), each {@code root/<tenant id>}, all on one filesystem. An unscoped sandbox
 * mounts its tenant's tree; a scoped one a view of hard links built inside {@code root}
 * ({@link ScopedViews}), so that nothing is copied anywhere.
 *
 * @param root    the directory holding every tenant's tree ({@code QUARRY_DATA_DIR/documents})
 * @param sync    the tenant's tree, brought up to date
 * @param syncAnd brings the tenant's tree up to date, then runs the work on it (blocking, on a worker)
 *                before any later write of the tenant's documents: what the work reads of a document
 *                is one version of it, whole
 */
public record TenantTrees(Path root, Function<UUID, Future<Path>> sync,
    BiFunction<UUID, TreeWork, Future<Path>> syncAnd) {

  /** Something done on a tenant's tree while nothing of the tenant's is written. */
  @FunctionalInterface
  public interface TreeWork {
    void use(Path tree) throws Exception;
  }

  public TenantTrees {
    root = root.toAbsolutePath().normalize();
  }

  /**
   * Trees that nothing rewrites while sandboxes run (tests, benchmarks of the sandbox alone):
   * {@code root/<tenant>} as it is, the work run on a worker.
   */
  public static TenantTrees fixed(Vertx vertx, Path root) {
    Path r = root.toAbsolutePath().normalize();
    return new TenantTrees(r, tenant -> Future.succeededFuture(r.resolve(tenant.toString())),
        (tenant, work) -> vertx.executeBlocking(() -> {
          Path tree = r.resolve(tenant.toString());
          work.use(tree);
          return tree;
        }, false));
  }
}
