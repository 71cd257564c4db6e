package dev.quarry.api;

import dev.quarry.tenancy.Places;
import dev.quarry.tenancy.Quotas;
import io.vertx.core.Handler;
import io.vertx.ext.web.RoutingContext;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * How many request bodies a tenant may be sending at once, across the gateway's replicas. A body
 * has a deadline (the body timeout, 120 s), but a client that trickles one byte at a time holds its
 * connection that long, and without a bound per tenant one key could hold every connection the
 * gateways allow that way (red team R6-1). A place is taken before the body is read and given back
 * once it has been (or the request ended first); past the bound the request is refused with
 * {@code 429 too_many_uploads}. Places are counted in PostgreSQL ({@link Quotas#acquireBody}), so
 * the bound holds however a load balancer spreads the tenant's requests.
 */
final class BodyPlaces {
  /** Request bodies one tenant may be sending at once. */
  static final int MAX_PER_TENANT = 32;
  private static final String PLACE = "quarry.bodyPlace";

  private final Quotas quotas;
  private final int max;

  BodyPlaces(Quotas quotas) {
    this(quotas, MAX_PER_TENANT);
  }

  BodyPlaces(Quotas quotas, int max) {
    this.quotas = quotas;
    this.max = max;
  }

  /**
   * After authentication, before the body handler: takes the tenant's place, or refuses the
   * request. The request stays paused while the place is taken (the body handler must see all of it).
   */
  Handler<RoutingContext> take() {
    return ctx -> {
      UUID tenant = ApiRoutes.tenant(ctx);
      Authentication.keepPaused(ctx);
      quotas.acquireBody(tenant, max).onComplete(ar -> {
        if (ar.failed()) {
          ctx.request().resume();
          ctx.fail(ar.cause() instanceof Places.Full
              ? new ApiError(429, "too_many_uploads", "this API key's tenant is already sending " + max
                  + " request bodies at once, the most it may; send this one when one of them has arrived")
              : ar.cause());
          return;
        }
        AtomicBoolean held = new AtomicBoolean(true);
        Quotas.Permit permit = ar.result();
        Runnable giveBack = () -> {
          if (held.compareAndSet(true, false)) {
            permit.close();
          }
        };
        if (ctx.response().ended() || ctx.response().closed()) {
          // The client went while the place was taken: no end handler would run now. It hung up
          // before its body was read, as the body handler would have found (red team R6-7).
          giveBack.run();
          ctx.fail(new io.vertx.core.http.HttpClosedException("the client closed the connection before its body was read"));
          return;
        }
        ctx.put(PLACE, giveBack);
        ctx.addEndHandler(v -> giveBack.run());
        ctx.next();
        ctx.request().resume();
      });
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
}
