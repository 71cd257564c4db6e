package dev.quarry.tenancy;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.regex.Pattern;

/**
 * API keys: {@code qk_<prefix>_<secret>}, where the prefix (12 hex digits) is shown in listings to
 * tell keys apart and the secret is 256 random bits. Only a SHA-256 of the whole key is stored: with
 * that much entropy a fast hash is enough, there is nothing to brute-force.
 */
public final class ApiKeys {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Pattern FORMAT = Pattern.compile("qk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}");

  private ApiKeys() {}

  /** A new key, and the prefix that identifies it. */
  public record Generated(String key, String prefix) {}

  public static Generated generate() {
    byte[] prefixBytes = new byte[6];
    byte[] secret = new byte[32];
    RANDOM.nextBytes(prefixBytes);
    RANDOM.nextBytes(secret);
    String prefix = "qk_" + HexFormat.of().formatHex(prefixBytes);
    String key = prefix + "_" + Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
    return new Generated(key, prefix);
  }

  /** Whether a string could be a key at all: anything else is refused without a database trip. */
  public static boolean wellFormed(String key) {
    return key != null && FORMAT.matcher(key).matches();
  }

  public static byte[] hash(String key) {
    return sha256(key.getBytes(StandardCharsets.UTF_8));
  }

  /** Compares two secrets in time that does not depend on where they differ. */
  public static boolean sameSecret(String given, String expected) {
    return MessageDigest.isEqual(sha256(given.getBytes(StandardCharsets.UTF_8)),
        sha256(expected.getBytes(StandardCharsets.UTF_8)));
  }

  private static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
