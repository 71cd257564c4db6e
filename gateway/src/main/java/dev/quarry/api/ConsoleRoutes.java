package dev.quarry.api;

import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The web console: static files from the jar's {@code console/}, each at an exact path, public
 * (they hold no secret; the console sends the tenant's key to the API itself, from the browser's
 * session storage). Every answer carries a strict Content-Security-Policy (scripts and styles from
 * this origin only, no inline script, no framing) and is revalidated by its ETag on every load, so
 * a new gateway's console is never mixed with an old one's cached modules.
 */
final class ConsoleRoutes {
  /** The console's files: the path each is served at, and its resource under {@code console/}. */
  static final Map<String, String> FILES = files(
      "/", "index.html",
      "/console/console.css", "console.css",
      "/console/app.js", "app.js",
      "/console/api.js", "api.js",
      "/console/dom.js", "dom.js",
      "/console/highlight.js", "highlight.js",
      "/console/documents.js", "documents.js",
      "/console/search.js", "search.js",
      "/console/ask.js", "ask.js",
      "/console/analyses.js", "analyses.js");

  static final String CONTENT_SECURITY_POLICY = String.join("; ",
      "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:",
      "connect-src 'self'", "form-action 'none'", "base-uri 'none'", "frame-ancestors 'none'");

  private record Asset(byte[] bytes, String contentType, String etag) {}

  private final Map<String, Asset> assets = new LinkedHashMap<>();

  ConsoleRoutes() {
    FILES.forEach((path, resource) -> assets.put(path, load(resource)));
  }

  void mount(Router router) {
    assets.keySet().forEach(path -> {
      router.get(path).handler(this::serve);
      router.head(path).handler(this::serve); // the server sends the head only
    });
  }

  private void serve(RoutingContext ctx) {
    Asset asset = assets.get(ctx.currentRoute().getPath());
    HttpServerResponse response = ctx.response()
        .putHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        .putHeader("X-Content-Type-Options", "nosniff")
        .putHeader("X-Frame-Options", "DENY")
        .putHeader("Referrer-Policy", "no-referrer")
        .putHeader("Cross-Origin-Opener-Policy", "same-origin")
        .putHeader("Cross-Origin-Resource-Policy", "same-origin")
        .putHeader("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
        .putHeader(HttpHeaders.CACHE_CONTROL, "no-cache")
        .putHeader(HttpHeaders.ETAG, asset.etag());
    if (asset.etag().equals(ctx.request().getHeader(HttpHeaders.IF_NONE_MATCH))) {
      response.setStatusCode(304).end();
      return;
    }
    // Set here, not left to end(): a HEAD's answer has no body and must still say how long it would be.
    response.putHeader(HttpHeaders.CONTENT_TYPE, asset.contentType())
        .putHeader(HttpHeaders.CONTENT_LENGTH, String.valueOf(asset.bytes().length))
        .end(io.vertx.core.buffer.Buffer.buffer(asset.bytes()));
  }

  private static Asset load(String resource) {
    try (InputStream in = ConsoleRoutes.class.getResourceAsStream("/console/" + resource)) {
      if (in == null) {
        throw new IllegalStateException("the console's file console/" + resource + " is not in the jar");
      }
      byte[] bytes = in.readAllBytes();
      String etag = "\"" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes), 0, 12) + "\"";
      return new Asset(bytes, contentType(resource), etag);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String contentType(String resource) {
    if (resource.endsWith(".html")) {
      return "text/html; charset=utf-8";
    } else if (resource.endsWith(".js")) {
      return "text/javascript; charset=utf-8";
    } else if (resource.endsWith(".css")) {
      return "text/css; charset=utf-8";
    }
    throw new IllegalArgumentException("no content type for console/" + resource);
  }

  private static Map<String, String> files(String... pathsAndResources) {
    Map<String, String> out = new LinkedHashMap<>();
    for (int i = 0; i < pathsAndResources.length; i += 2) {
      out.put(pathsAndResources[i], pathsAndResources[i + 1]);
    }
    return java.util.Collections.unmodifiableMap(out);
  }
}
