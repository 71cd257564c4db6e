package dev.quarry.api;

import dev.quarry.store.DocumentsFs;
import dev.quarry.tenancy.ApiKey;
import dev.quarry.tenancy.NewKey;
import dev.quarry.config.Quota;
import dev.quarry.tenancy.Quotas;
import dev.quarry.tenancy.Tenant;
import dev.quarry.tenancy.TenantLimits;
import dev.quarry.tenancy.TenantStore;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Route;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.time.OffsetDateTime;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * {@code /v1/admin/}: tenants, their API keys and quotas, for the holder of
 * {@code QUARRY_ADMIN_TOKEN} (checked by each route's first handler, {@link Authentication#admin}, and
 * again by each handler).
 */
final class AdminRoutes {
  private static final Logger log = LoggerFactory.getLogger(AdminRoutes.class);
  static final String PREFIX = "/v1/admin";
  private static final int MAX_NAME_CHARS = 100;

  private final TenantStore tenants;
  private final Quotas quotas;
  private final DocumentsFs documentsFs;
  private final Function<UUID, Future<Void>> endWork;
  private final Consumer<UUID> forget;

  /**
   * @param endWork ends what runs for a tenant being deleted (its analyses, its sandboxes); completes
   *                once its sandboxes are gone
   * @param forget  drops what this gateway keeps in memory of a tenant whose rows are deleted (its
   *                search copies and cached query vectors)
   */
  AdminRoutes(TenantStore tenants, Quotas quotas, DocumentsFs documentsFs, Function<UUID, Future<Void>> endWork,
      Consumer<UUID> forget) {
    this.tenants = tenants;
    this.quotas = quotas;
    this.documentsFs = documentsFs;
    this.endWork = endWork;
    this.forget = forget;
  }

  /**
   * Each route starts with {@code adminAuth}; each handler checks again that the request holds the
   * admin principal (defence in depth: a route added without the check still refuses a tenant).
   */
  void mount(Router router, Handler<RoutingContext> adminAuth, Handler<RoutingContext> jsonBody) {
    route(router, HttpMethod.POST, "/tenants", adminAuth, jsonBody, this::createTenant);
    route(router, HttpMethod.GET, "/tenants", adminAuth, null, this::listTenants);
    route(router, HttpMethod.GET, "/tenants/:tenant", adminAuth, null, this::getTenant);
    route(router, HttpMethod.DELETE, "/tenants/:tenant", adminAuth, null, this::deleteTenant);
    route(router, HttpMethod.POST, "/tenants/:tenant/keys", adminAuth, jsonBody, this::createKey);
    route(router, HttpMethod.GET, "/tenants/:tenant/keys", adminAuth, null, this::listKeys);
    route(router, HttpMethod.DELETE, "/tenants/:tenant/keys/:key", adminAuth, null, this::revokeKey);
    route(router, HttpMethod.PUT, "/tenants/:tenant/quotas", adminAuth, jsonBody, this::setQuotas);
  }

  private static void route(Router router, HttpMethod method, String path, Handler<RoutingContext> adminAuth,
      Handler<RoutingContext> body, Handler<RoutingContext> handler) {
    Route route = router.route(method, PREFIX + path).handler(adminAuth);
    if (body != null) {
      route.handler(body);
    }
    route.handler(ctx -> {
      Authentication.requireAdmin(ctx);
      handler.handle(ctx);
    });
  }

  private void createTenant(RoutingContext ctx) {
    String name = name(Requests.jsonObject(ctx.body().buffer()), true);
    tenants.createTenant(name)
        .recover(err -> Future.failedFuture(err instanceof TenantStore.NameTaken
            ? new ApiError(409, "tenant_exists", err.getMessage()) : err))
        .onSuccess(created -> reply(ctx, 201, new JsonObject()
            .put("id", created.key().tenantId().toString())
            .put("name", name)
            .put("api_key", created.secret())
            .put("key", key(created.key()))))
        .onFailure(ctx::fail);
  }

  private void listTenants(RoutingContext ctx) {
    tenants.listTenants()
        .onSuccess(list -> reply(ctx, 200, new JsonObject().put("tenants",
            new JsonArray(list.stream().map(AdminRoutes::tenant).toList()))))
        .onFailure(ctx::fail);
  }

  private void getTenant(RoutingContext ctx) {
    UUID id = tenantId(ctx);
    tenants.tenant(id)
        .map(found -> found.orElseThrow(() -> noTenant(id)))
        .compose(t -> quotas.limits(id).map(l -> tenant(t).put("quotas", limits(l))))
        .onSuccess(json -> reply(ctx, 200, json))
        .onFailure(ctx::fail);
  }

  /**
   * Its running work ends first, on every replica (analyses fail with TenantDeleted, sandboxes are
   * removed, warm ones included: the others hear of it by notification, or at their next look), then
   * its rows go; a sandbox that could not be removed is left to the reaper.
   */
  private void deleteTenant(RoutingContext ctx) {
    UUID id = tenantId(ctx);
    tenants.tenant(id)
        .map(found -> found.orElseThrow(() -> noTenant(id)))
        .compose(t -> tenants.announceDeletion(id).recover(e -> {
          log.warn("tenant {}: the other replicas could not be told of its deletion ({}); they find out"
              + " when they next look", id, e.toString());
          return Future.succeededFuture();
        }))
        .compose(t -> endWork.apply(id).recover(e -> {
          log.warn("tenant {}: not every sandbox could be removed ({}); the reaper will", id, e.toString());
          return Future.succeededFuture();
        }))
        .compose(v -> tenants.deleteTenant(id))
        .compose(deleted -> deleted ? Future.succeededFuture() : Future.failedFuture(noTenant(id)))
        .compose(v -> {
          quotas.forget(id);
          forget.accept(id);
          // The /documents cache of a tenant that no longer exists, its version markers too, after
          // the file writes already queued for it; later ones do nothing (red team R6-5).
          return documentsFs.tenantDeleted(id).recover(e -> {
            log.warn("tenant {}: its /documents files could not all be removed: {}", id, e.toString());
            return Future.succeededFuture();
          });
        })
        .onSuccess(v -> ctx.response().setStatusCode(204).end())
        .onFailure(ctx::fail);
  }

  private void createKey(RoutingContext ctx) {
    UUID id = tenantId(ctx);
    JsonObject body = ctx.body().length() == 0 ? new JsonObject() : Requests.jsonObject(ctx.body().buffer());
    String name = name(body, false);
    tenants.createKey(id, name)
        .map(found -> found.orElseThrow(() -> noTenant(id)))
        .onSuccess((NewKey created) -> reply(ctx, 201, key(created.key()).put("api_key", created.secret())))
        .onFailure(ctx::fail);
  }

  private void listKeys(RoutingContext ctx) {
    UUID id = tenantId(ctx);
    tenants.listKeys(id)
        .map(found -> found.orElseThrow(() -> noTenant(id)))
        .onSuccess(keys -> reply(ctx, 200, new JsonObject().put("keys",
            new JsonArray(keys.stream().map(AdminRoutes::key).toList()))))
        .onFailure(ctx::fail);
  }

  private void revokeKey(RoutingContext ctx) {
    UUID id = tenantId(ctx);
    UUID keyId = Requests.uuid("key id", ctx.pathParam("key"));
    tenants.revokeKey(id, keyId)
        .compose(revoked -> revoked ? Future.succeededFuture()
            : Future.failedFuture(ApiError.notFound("tenant " + id + " has no key with id " + keyId)))
        .onSuccess(v -> ctx.response().setStatusCode(204).end())
        .onFailure(ctx::fail);
  }

  private void setQuotas(RoutingContext ctx) {
    UUID id = tenantId(ctx);
    JsonObject body = Requests.jsonObject(ctx.body().buffer());
    Set<String> known = Stream.of(Quota.values()).map(Quota::wireName).collect(Collectors.toSet());
    for (String field : body.fieldNames()) {
      if (!known.contains(field)) {
        throw ApiError.badRequest("invalid_quota", "field '" + field + "' is not a quota; quotas are "
            + String.join(", ", known.stream().sorted().toList()));
      }
    }
    Map<Quota, Long> overrides = new EnumMap<>(Quota.class);
    for (Quota q : Quota.values()) {
      Object v = body.getValue(q.wireName());
      if (v != null && !(v instanceof Integer || v instanceof Long)) {
        throw ApiError.badRequest("invalid_quota", "field '" + q.wireName() + "' must be an integer or null");
      }
      overrides.put(q, v == null ? null : ((Number) v).longValue());
    }
    tenants.tenant(id)
        .map(found -> found.orElseThrow(() -> noTenant(id)))
        .compose(t -> quotas.setOverrides(id, overrides))
        .onSuccess(l -> reply(ctx, 200, new JsonObject().put("quotas", limits(l))))
        .onFailure(ctx::fail);
  }

  private static UUID tenantId(RoutingContext ctx) {
    return Requests.uuid("tenant id", ctx.pathParam("tenant"));
  }

  private static String name(JsonObject body, boolean required) {
    Object raw = body.getValue("name");
    if (raw == null && !required) {
      return "";
    }
    if (!(raw instanceof String name)) {
      throw ApiError.badRequest("invalid_name", raw == null ? "field 'name' is required" : "field 'name' must be a string");
    }
    if (name.isBlank() || name.length() > MAX_NAME_CHARS || name.chars().anyMatch(Character::isISOControl)) {
      throw ApiError.badRequest("invalid_name", "field 'name' must be 1 to " + MAX_NAME_CHARS
          + " characters without control characters");
    }
    return name.strip();
  }

  private static ApiError noTenant(UUID id) {
    return ApiError.notFound("no tenant with id " + id);
  }

  private static JsonObject tenant(Tenant t) {
    return new JsonObject().put("id", t.id().toString()).put("name", t.name())
        .put("created_at", iso(t.createdAt()));
  }

  private static JsonObject key(ApiKey k) {
    return new JsonObject().put("id", k.id().toString()).put("tenant_id", k.tenantId().toString())
        .put("prefix", k.prefix()).put("name", k.name()).put("created_at", iso(k.createdAt()))
        .put("revoked_at", k.revokedAt() == null ? null : iso(k.revokedAt()));
  }

  private static JsonObject limits(TenantLimits l) {
    JsonObject json = new JsonObject();
    for (Quota q : Quota.values()) {
      json.put(q.wireName(), l.of(q));
    }
    return json;
  }

  private static String iso(OffsetDateTime t) {
    return t.toInstant().toString();
  }

  private static void reply(RoutingContext ctx, int status, JsonObject body) {
    ctx.response().setStatusCode(status).putHeader(HttpHeaders.CONTENT_TYPE, "application/json").end(body.encode());
  }
}
