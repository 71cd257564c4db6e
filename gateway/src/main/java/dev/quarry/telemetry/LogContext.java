package dev.quarry.telemetry;

import java.util.UUID;
import java.util.function.Supplier;
import org.slf4j.MDC;

/**
 * Puts the tenant and analysis ids into the logging MDC (they appear as {@code mdc.tenant_id} and
 * {@code mdc.analysis_id} in the JSON logs) for the extent of a block, and restores what was there
 * after. On an event loop the MDC only reaches the synchronous part of a handler, so wrap each
 * callback that logs, or log from a virtual-thread verticle where a block is the whole analysis.
 */
public final class LogContext {
  public static final String TENANT = "tenant_id";
  public static final String ANALYSIS = "analysis_id";

  private LogContext() {}

  public static void run(UUID tenant, UUID analysis, Runnable body) {
    call(tenant, analysis, () -> {
      body.run();
      return null;
    });
  }

  public static <T> T call(UUID tenant, UUID analysis, Supplier<T> body) {
    String previousTenant = MDC.get(TENANT);
    String previousAnalysis = MDC.get(ANALYSIS);
    put(TENANT, tenant);
    put(ANALYSIS, analysis);
    try {
      return body.get();
    } finally {
      restore(TENANT, previousTenant);
      restore(ANALYSIS, previousAnalysis);
    }
  }

  private static void put(String key, UUID value) {
    if (value != null) {
      MDC.put(key, value.toString());
    }
  }

  private static void restore(String key, String previous) {
    if (previous == null) {
      MDC.remove(key);
    } else {
      MDC.put(key, previous);
    }
  }
}
