package dev.quarry.store;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.quarry.config.Config;
import dev.quarry.support.ThrowawayCluster;
import java.util.Map;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

@DisplayName("The gateway refuses to start as an app role that row-level security would not hold (a PostgreSQL cluster of its own)")
class AppRoleCheckTest {

  @Test
  @DisplayName("a superuser, a role with BYPASSRLS, the tables' owner and a wrong password each stop start-up, naming the problem")
  void refusesRolesThatPassTheFence() throws Exception {
    try (ThrowawayCluster cluster = ThrowawayCluster.create()) {
      Config config = cluster.config();
      assertThatCode(() -> Database.checkAppRole(config)).doesNotThrowAnyException();

      cluster.query("ALTER ROLE " + config.pgAppUser() + " BYPASSRLS");
      assertThatThrownBy(() -> Database.checkAppRole(config))
          .hasMessageContaining("QUARRY_PG_APP_USER " + config.pgAppUser() + " has BYPASSRLS");
      cluster.query("ALTER ROLE " + config.pgAppUser() + " NOBYPASSRLS SUPERUSER");
      assertThatThrownBy(() -> Database.checkAppRole(config)).hasMessageContaining("is a superuser");
      cluster.query("ALTER ROLE " + config.pgAppUser() + " NOSUPERUSER");
      assertThatCode(() -> Database.checkAppRole(config)).doesNotThrowAnyException();

      Config asOwner = Config.fromEnv(Map.of("QUARRY_PG_PORT", Integer.toString(cluster.port()),
          "QUARRY_PG_APP_USER", config.pgUser(), "QUARRY_PG_APP_PASSWORD", config.pgPassword()));
      assertThatThrownBy(() -> Database.checkAppRole(asOwner)).hasMessageMatching(".*owns \\d+ tables.*");
      Config wrong = Config.fromEnv(Map.of("QUARRY_PG_PORT", Integer.toString(cluster.port()),
          "QUARRY_PG_APP_PASSWORD", "not-the-password"));
      assertThatThrownBy(() -> Database.checkAppRole(wrong))
          .hasMessageContaining("cannot log in").hasMessageContaining("as QUARRY_PG_APP_USER " + config.pgAppUser());
    }
  }
}
