package dev.quarry.api;

import static org.assertj.core.api.Assertions.assertThat;

import io.vertx.core.net.HostAndPort;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Label;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/** The Host check runs before anything else parses the header, so it must never throw. */
@Label("The Host header check")
class HostHeaderPropertiesTest {

  @Provide
  Arbitrary<String> hosts() {
    return Arbitraries.oneOf(
        Arbitraries.strings().ofMaxLength(64),
        Arbitraries.strings().withChars("%0123456789abcdefABCDEF:[].-_").ofMaxLength(24),
        Arbitraries.strings().alpha().ofMinLength(1).ofMaxLength(12).map(s -> s + ".example:" + s.length()));
  }

  @Property(tries = 2000)
  @Label("answers for any header, never throws, and what it accepts Vert.x parses")
  void neverThrows(@ForAll("hosts") String host) {
    boolean valid = ProtocolErrors.validHost(host);
    if (valid) {
      assertThat(HostAndPort.parseAuthority(host, -1)).as(host).isNotNull();
      assertThat(host).doesNotContain("%");
    }
  }

  @Example
  @Label("names, addresses and ports are accepted; percent-encoding, spaces and user info are not")
  void examples() {
    assertThat(ProtocolErrors.validHost("quarry.example.com")).isTrue();
    assertThat(ProtocolErrors.validHost("127.0.0.1:8080")).isTrue();
    assertThat(ProtocolErrors.validHost("[::1]:8080")).isTrue();
    assertThat(ProtocolErrors.validHost("%41")).isFalse();
    assertThat(ProtocolErrors.validHost("a b")).isFalse();
    assertThat(ProtocolErrors.validHost("user@host")).isFalse();
    assertThat(ProtocolErrors.validHost("")).isFalse();
  }
}
