package dev.quarry.sandbox;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.dockerjava.api.model.AuthConfig;
import dev.quarry.config.Settings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Iterator;
import java.util.Locale;
import java.util.Map;

/**
 * How the gateway gets the sandbox image into its engine when the engine lacks it: pulled from the
 * registry its name holds ({@code registry.example.com/quarry/quarry-sandbox:0.1.0}; a name without
 * one is Docker Hub's), with credentials from a Secret: a user name and password, or a docker
 * config JSON ({@code .dockerconfigjson}, the key of a {@code kubernetes.io/dockerconfigjson}
 * Secret, the same kind that pulls the gateway's own image). The config file is read at each pull,
 * so a Secret updated in place is used at the next attempt.
 *
 * @param username   {@code QUARRY_SANDBOX_REGISTRY_USERNAME}; with {@code password} (both or neither), used
 *                   whatever the file says
 * @param password   {@code QUARRY_SANDBOX_REGISTRY_PASSWORD}
 * @param configFile {@code QUARRY_SANDBOX_REGISTRY_CONFIG}: a docker config JSON file, or a directory
 *                   holding {@code config.json}; null when not given
 * @param timeout    {@code QUARRY_SANDBOX_PULL_TIMEOUT_SECONDS}: one pull's limit, after which it is
 *                   abandoned and tried again later
 */
public record ImagePull(String username, String password, Path configFile, Duration timeout) {
  public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(10);
  /** Anonymous pulls with the default timeout. */
  public static final ImagePull ANONYMOUS = new ImagePull("", "", null, DEFAULT_TIMEOUT);
  /** Docker Hub, as the engine names it for a name without a registry. */
  static final String DOCKER_HUB = "docker.io";
  private static final ObjectMapper JSON = new ObjectMapper();

  public ImagePull {
    username = username == null ? "" : username;
    password = password == null ? "" : password;
  }

  static ImagePull read(Settings s) {
    String user = s.string("QUARRY_SANDBOX_REGISTRY_USERNAME", "");
    String password = s.secret("QUARRY_SANDBOX_REGISTRY_PASSWORD", "");
    String config = s.string("QUARRY_SANDBOX_REGISTRY_CONFIG", "");
    Duration timeout = s.seconds("QUARRY_SANDBOX_PULL_TIMEOUT_SECONDS", (int) DEFAULT_TIMEOUT.toSeconds(), 10, 3600);
    return new ImagePull(user, password, config.isEmpty() ? null : Path.of(config), timeout);
  }

  /**
   * The registry an image name pulls from, as Docker reads the name: its first component when that
   * has a dot or a port or is {@code localhost}, otherwise Docker Hub.
   */
  public static String registry(String image) {
    int slash = image.indexOf('/');
    if (slash < 0) {
      return DOCKER_HUB;
    }
    String first = image.substring(0, slash);
    return first.contains(".") || first.contains(":") || first.equals("localhost") ? first : DOCKER_HUB;
  }

  /** How the pull authenticates, for the log (never the secret itself). */
  String describe() {
    if (!username.isEmpty()) {
      return "as " + username + " (QUARRY_SANDBOX_REGISTRY_USERNAME)";
    }
    if (configFile == null) {
      return "anonymously";
    }
    Path file = file();
    return Files.exists(file) ? "with the credentials of " + file + " (QUARRY_SANDBOX_REGISTRY_CONFIG)"
        : "anonymously (QUARRY_SANDBOX_REGISTRY_CONFIG: no file " + file + ")";
  }

  /** The config file itself: {@code configFile}, or the {@code config.json} in it when it is a directory. */
  private Path file() {
    return Files.isDirectory(configFile) ? configFile.resolve("config.json") : configFile;
  }

  /**
   * The credentials for {@code image}'s registry, or null for an anonymous pull: the user name and
   * password when given, else the config file's entry for that registry (none there, or no file, as
   * when the optional Secret of k8s/base is not made: anonymous).
   *
   * @throws IOException the config file cannot be read or is not a docker config JSON
   */
  AuthConfig auth(String image) throws IOException {
    String registry = registry(image);
    if (username.isEmpty() != password.isEmpty()) {
      // Not refused at start-up, where each setting is read alone: the readiness check says it.
      throw new IOException("QUARRY_SANDBOX_REGISTRY_USERNAME and QUARRY_SANDBOX_REGISTRY_PASSWORD go together,"
          + " and only " + (username.isEmpty() ? "the password" : "the user name") + " is given");
    }
    if (!username.isEmpty()) {
      return new AuthConfig().withUsername(username).withPassword(password).withRegistryAddress(registry);
    }
    if (configFile == null) {
      return null;
    }
    Path file = file();
    if (!Files.exists(file)) {
      return null;
    }
    JsonNode auths;
    try {
      auths = JSON.readTree(Files.readString(file, StandardCharsets.UTF_8)).path("auths");
    } catch (com.fasterxml.jackson.core.JacksonException e) {
      throw new IOException(file + " (QUARRY_SANDBOX_REGISTRY_CONFIG) is not JSON: " + e.getOriginalMessage(), e);
    }
    for (Iterator<Map.Entry<String, JsonNode>> it = auths.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> entry = it.next();
      if (hostOf(entry.getKey()).equals(hostOf(registry))) {
        return credentials(entry.getValue(), registry, file);
      }
    }
    return null;
  }

  private static AuthConfig credentials(JsonNode entry, String registry, Path file) throws IOException {
    String user = entry.path("username").asText("");
    String pass = entry.path("password").asText("");
    String encoded = entry.path("auth").asText("");
    if (user.isEmpty() && !encoded.isEmpty()) {
      String decoded;
      try {
        decoded = new String(Base64.getDecoder().decode(encoded), StandardCharsets.UTF_8);
      } catch (IllegalArgumentException e) {
        throw new IOException(file + ": the \"auth\" of " + registry + " is not base64", e);
      }
      int colon = decoded.indexOf(':');
      if (colon < 0) {
        throw new IOException(file + ": the \"auth\" of " + registry + " is not user:password");
      }
      user = decoded.substring(0, colon);
      pass = decoded.substring(colon + 1);
    }
    AuthConfig auth = new AuthConfig().withRegistryAddress(registry);
    String token = entry.path("identitytoken").asText("");
    if (!token.isEmpty()) {
      return auth.withIdentityToken(token);
    }
    return auth.withUsername(user).withPassword(pass);
  }

  /**
   * A config file's key as a registry host: keys may carry a scheme and a path
   * ({@code https://index.docker.io/v1/}, Docker Hub's, for which the engine's name is docker.io).
   */
  static String hostOf(String key) {
    String host = key.toLowerCase(Locale.ROOT).replaceFirst("^[a-z]+://", "");
    int slash = host.indexOf('/');
    host = slash < 0 ? host : host.substring(0, slash);
    return host.equals("index.docker.io") || host.equals("registry-1.docker.io") ? DOCKER_HUB : host;
  }
}
