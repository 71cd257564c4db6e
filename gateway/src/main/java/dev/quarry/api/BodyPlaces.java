package dev.quarry.api;

import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * How many request bodies a tenant may be sending at once. A body has a deadline (the body timeout,
 * 120 s), but a client that trickles one byte at a time holds its connection that long, and without
 * a bound per tenant one key could hold every connection the gateway allows that way (red team
 * R6-1). A place is taken before the body is read and given back once it has been (or the request
 * ended first); past the bound the request is refused with {@code 429 too_many_uploads}.
 */
final class BodyPlaces {
  /** Request bodies one tenant may be sending at once. */
  static final int MAX_PER_TENANT = 32;
  private static final String PLACE = "quarry.bodyPlace";

  private final int max;
  private final Map<UUID, AtomicInteger> sending = new ConcurrentHashMap<>();

  BodyPlaces() {
    this(MAX_PER_TENANT);
  }

  BodyPlaces(int max) {
    this.max = max;
  }

  /** Before the body handler: takes the tenant's place, or refuses the request. */
  Handler<RoutingContext> take() {
    return ctx -> {
      UUID tenant = ApiRoutes.tenant(ctx);
      AtomicInteger count = sending.computeIfAbsent(tenant, t -> new AtomicInteger());
      if (count.incrementAndGet() > max) {
        count.decrementAndGet();
        ctx.fail(new ApiError(429, "too_many_uploads", "this API key's tenant is already sending " + max
            + " request bodies at once, the most it may; send this one when one of them has arrived"));
        return;
      }
      AtomicBoolean held = new AtomicBoolean(true);
      Runnable giveBack = () -> {
        if (held.compareAndSet(true, false)) {
          count.decrementAndGet();
        }
      };
      ctx.put(PLACE, giveBack);
      ctx.addEndHandler(v -> giveBack.run());
      ctx.next();
    };
  }

  /** After the body handler: the body has arrived, so its place goes to the next one. */
  Handler<RoutingContext> release() {
    return ctx -> {
      Runnable giveBack = ctx.get(PLACE);
      if (giveBack != null) {
        giveBack.run();
      }
      ctx.next();
    };
  }

  /** The tenant's bodies being sent now. */
  int sending(UUID tenant) {
    AtomicInteger count = sending.get(tenant);
    return count == null ? 0 : count.get();
  }
}
