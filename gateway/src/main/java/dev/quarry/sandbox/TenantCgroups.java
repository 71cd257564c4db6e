package dev.quarry.sandbox;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Each tenant's sandbox containers under a cgroup of their own (Docker's {@code CgroupParent}), so
 * that under contention the kernel shares the CPU between tenants rather than between containers:
 * groups made alongside each other have the same weight, so a tenant with 8 busy sandboxes and one
 * with 1 get about half the CPUs each, not 8/9 and 1/9 (each container keeps its own limit inside).
 *
 * <p>With the engine's {@code cgroupfs} driver the group is {@code /<parent>/<tenant id>}, made by
 * the runtime with the first container in it; with the {@code systemd} driver it is the slice
 * {@code <parent>-t<tenant id's hex>.slice} (a {@code -} nests slices, so the id's are dropped),
 * which systemd removes once empty. Neither runtime removes a {@code cgroupfs} group: when the last
 * container of a tenant this gateway started is removed, the gateway removes the tenant's group
 * itself where it can see the engine's cgroup filesystem (the same host); elsewhere (an engine in
 * another container) one empty group per tenant stays until the engine restarts.
 */
final class TenantCgroups {
  private static final Logger LOG = LoggerFactory.getLogger(TenantCgroups.class);
  static final Path CGROUP_ROOT = Path.of("/sys/fs/cgroup");

  private final String parent;
  private final Supplier<String> driver;
  private final Path cgroupRoot;
  /** This gateway's containers of each tenant, from just before their creation until their removal. */
  private final Map<UUID, Integer> containers = new HashMap<>();

  /**
   * @param parent the name the groups go under ({@code QUARRY_SANDBOX_CGROUP_PARENT}); empty: none
   * @param driver the engine's cgroup driver ({@code docker info}), asked when first needed
   */
  TenantCgroups(String parent, Supplier<String> driver, Path cgroupRoot) {
    this.parent = parent;
    this.driver = driver;
    this.cgroupRoot = cgroupRoot;
  }

  boolean enabled() {
    return !parent.isEmpty();
  }

  /** The {@code CgroupParent} of the tenant's containers, or null when groups are off. */
  String parentOf(UUID tenantId) {
    if (!enabled()) {
      return null;
    }
    return "systemd".equals(driver.get())
        ? parent + "-t" + tenantId.toString().replace("-", "") + ".slice"
        : "/" + parent + "/" + tenantId;
  }

  /** A container of the tenant is about to be created: its group is not removed until it is. */
  synchronized void entering(UUID tenantId) {
    containers.merge(tenantId, 1, Integer::sum);
  }

  /**
   * A container of the tenant is gone (or was never made). When it was this gateway's last one of
   * the tenant, the tenant's group goes too, where this host shows it: under the same lock as
   * {@link #entering}, so never while this gateway is making a container in it.
   */
  synchronized void left(UUID tenantId) {
    Integer left = containers.computeIfPresent(tenantId, (id, n) -> n <= 1 ? null : n - 1);
    if (left == null && enabled() && !"systemd".equals(driver.get())) {
      removeEmptyGroup(tenantId);
    }
  }

  /** Containers of the tenant this gateway has now (being created, alive or being removed). */
  synchronized int containersOf(UUID tenantId) {
    return containers.getOrDefault(tenantId, 0);
  }

  /**
   * The tenant's group in each hierarchy this host shows ({@code /sys/fs/cgroup/<controller>/…} with
   * cgroup v1, {@code /sys/fs/cgroup/…} with v2), where there is one.
   */
  List<Path> groupsOf(UUID tenantId) {
    List<Path> bases = new ArrayList<>();
    bases.add(cgroupRoot);
    try (Stream<Path> s = Files.list(cgroupRoot)) {
      s.filter(p -> Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)).forEach(bases::add);
    } catch (IOException | RuntimeException e) {
      return List.of(); // no cgroup filesystem here (another host's engine, a container's namespace)
    }
    List<Path> groups = new ArrayList<>();
    for (Path base : bases) {
      Path group = base.resolve(parent).resolve(tenantId.toString());
      if (Files.isDirectory(group, LinkOption.NOFOLLOW_LINKS)) {
        groups.add(group);
      }
    }
    return groups;
  }

  /** rmdir of each of the tenant's groups: refused by the kernel while it holds a container (another gateway's). */
  private void removeEmptyGroup(UUID tenantId) {
    for (Path group : groupsOf(tenantId)) {
      try {
        Files.delete(group);
      } catch (IOException | RuntimeException e) {
        LOG.debug("cgroup {} stays: {}", group, e.toString());
      }
    }
  }
}
