package dev.quarry.api;

import dev.quarry.config.TenancySettings;
import dev.quarry.tenancy.ApiKeys;
import dev.quarry.tenancy.Quotas;
import dev.quarry.tenancy.TenantStore;
import io.vertx.core.Future;
import io.vertx.core.Handler;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.ext.web.RoutingContext;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * Who is asking, decided by the route that matched, never by the spelling of the path.
 *
 * <p>Two walls. First, {@link #canonicalPath} refuses (400) every request whose path is not already
 * in the one form the router would reduce it to: no percent-escapes, no dot segments, no empty
 * segments (doubled or trailing slashes), no backslashes, nothing outside letters, digits and
 * {@code -._~}. Quarry's paths are fixed words and UUIDs, so no client needs anything else, and
 * after this check the raw path, the decoded path and the path the router matches are one string.
 * Second, authentication is the first handler of each route itself ({@link #tenant}, {@link #admin}):
 * whichever route a request reaches, that route's own check runs, and the handlers behind it
 * read the principal through {@link #tenantOf} / {@link #requireAdmin}, which refuse any other.
 */
final class Authentication {
  /** What the route's check found: the admin token's holder, or a tenant by its API key. */
  sealed interface Principal permits Admin, Tenant {}

  record Admin() implements Principal {}

  record Tenant(UUID id) implements Principal {}

  private static final String PRINCIPAL_KEY = "quarry.principal";
  private static final String BEARER = "Bearer ";
  private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9._~-]+");

  private final TenancySettings settings;
  private final TenantStore tenants;
  private final Quotas quotas;

  Authentication(TenancySettings settings, TenantStore tenants, Quotas quotas) {
    this.settings = settings;
    this.tenants = tenants;
    this.quotas = quotas;
  }

  /** The first handler of every request: a path not in canonical form gets a 400 naming why. */
  static void canonicalPath(RoutingContext ctx) {
    String problem = whyNotCanonical(ctx.request().path());
    if (problem == null && !ctx.request().path().equals(ctx.normalizedPath())) {
      problem = "it is not in normal form"; // never expected after the checks above; a belt
    }
    if (problem != null) {
      ctx.fail(nonCanonical(problem));
      return;
    }
    ctx.next();
  }

  /** The refusal of a path not in canonical form, saying why. */
  static ApiError nonCanonical(String problem) {
    return ApiError.badRequest("non_canonical_path", "the request path is refused: " + problem
        + "; send the path as documented, e.g. /v1/documents/{id}");
  }

  /** Why {@code path} is not canonical, or null when it is. */
  static String whyNotCanonical(String path) {
    if (path == null || !path.startsWith("/")) {
      return "it does not start with '/'";
    }
    if (path.equals("/")) {
      return null;
    }
    String[] segments = path.substring(1).split("/", -1);
    for (String segment : segments) {
      if (segment.isEmpty()) {
        return "it has an empty segment (a doubled or trailing '/')";
      }
      if (segment.equals(".") || segment.equals("..")) {
        return "it has a dot segment ('" + segment + "')";
      }
      if (segment.indexOf('%') >= 0) {
        return "it has a percent-escape ('%'); Quarry's paths need none";
      }
      if (!SEGMENT.matcher(segment).matches()) {
        return "it has a character other than letters, digits and '-._~'";
      }
    }
    return null;
  }

  /** The first handler of a tenant route: an API key, from which alone the tenant comes. */
  Handler<RoutingContext> tenant() {
    return this::authenticateTenant;
  }

  /** The first handler of an admin route: the admin token. */
  Handler<RoutingContext> admin() {
    return this::authenticateAdmin;
  }

  private void authenticateAdmin(RoutingContext ctx) {
    if (ambiguous(ctx)) {
      return;
    }
    String token = settings.adminToken();
    String credential = bearer(ctx);
    if (token.isEmpty()) {
      ctx.fail(new ApiError(403, "admin_disabled",
          "the admin API is off; start the gateway with QUARRY_ADMIN_TOKEN set to use it"));
    } else if (credential == null || !ApiKeys.sameSecret(credential, token)) {
      ctx.fail(unauthorized("the admin API takes 'Authorization: Bearer <QUARRY_ADMIN_TOKEN>'"));
    } else {
      ctx.put(PRINCIPAL_KEY, new Admin());
      ctx.next();
    }
  }

  /** Counts against the tenant's requests per minute once the key is known. */
  private void authenticateTenant(RoutingContext ctx) {
    if (ambiguous(ctx)) {
      return;
    }
    String credential = bearer(ctx);
    if (credential == null) {
      ctx.fail(unauthorized("send an API key as 'Authorization: Bearer <key>'"));
      return;
    }
    // The body waits while the key is looked up: the body handler further on must see all of it.
    HttpServerRequest request = ctx.request();
    request.pause();
    tenants.authenticate(credential)
        .compose(found -> found.isEmpty()
            ? Future.failedFuture(unauthorized("the API key is not valid (unknown, malformed or revoked)"))
            : quotas.admitRequest(found.get()).map(admitted -> found.get()))
        .onSuccess(tenant -> {
          ctx.put(PRINCIPAL_KEY, new Tenant(tenant));
          ctx.next();
          if (ctx.get(KEEP_PAUSED) == null) {
            request.resume();
          }
        })
        .onFailure(err -> {
          request.resume();
          ctx.fail(err);
        });
  }

  private static final String KEEP_PAUSED = "quarry.keepPaused";

  /**
   * For a handler after authentication that goes on asynchronously before the body handler (a body's
   * place): authentication then leaves the request paused, and that handler resumes it once the
   * body handler is in place.
   */
  static void keepPaused(RoutingContext ctx) {
    ctx.put(KEEP_PAUSED, Boolean.TRUE);
  }

  /** The tenant of a request a tenant route admitted; any other principal is refused (401). */
  static UUID tenantOf(RoutingContext ctx) {
    if (ctx.get(PRINCIPAL_KEY) instanceof Tenant t) {
      return t.id();
    }
    throw unauthorized("this endpoint takes a tenant's API key");
  }

  /** Defence in depth for the admin handlers: refuses (401) anything but the admin token's holder. */
  static void requireAdmin(RoutingContext ctx) {
    if (!(ctx.get(PRINCIPAL_KEY) instanceof Admin)) {
      throw unauthorized("the admin API takes 'Authorization: Bearer <QUARRY_ADMIN_TOKEN>'");
    }
  }

  /**
   * Two Authorization headers are two claims to be someone: refused (400) rather than picking one,
   * since a proxy in front may have picked the other.
   */
  private static boolean ambiguous(RoutingContext ctx) {
    if (ctx.request().headers().getAll(HttpHeaders.AUTHORIZATION).size() > 1) {
      ctx.fail(ApiError.badRequest("ambiguous_credentials",
          "the request has more than one Authorization header; send one"));
      return true;
    }
    return false;
  }

  private static String bearer(RoutingContext ctx) {
    String header = ctx.request().getHeader(HttpHeaders.AUTHORIZATION);
    if (header == null || !header.regionMatches(true, 0, BEARER, 0, BEARER.length())) {
      return null;
    }
    String credential = header.substring(BEARER.length()).strip();
    return credential.isEmpty() ? null : credential;
  }

  static ApiError unauthorized(String message) {
    return new ApiError(401, "unauthorized", message);
  }
}
