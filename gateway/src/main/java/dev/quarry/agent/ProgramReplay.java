package dev.quarry.agent;

import dev.quarry.sandbox.CellListener;
import dev.quarry.sandbox.CellOptions;
import dev.quarry.sandbox.CellOutcome;
import dev.quarry.sandbox.SandboxCapacityExhausted;
import dev.quarry.sandbox.SandboxQuotaExceeded;
import dev.quarry.sandbox.SandboxSession;
import dev.quarry.sandbox.Scope;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.List;
import java.util.UUID;

/** One run of a stored program in a sandbox of its own, closed afterwards whatever happens. Blocking. */
final class ProgramReplay {
  private final AnalysisService.Deps deps;
  private final UUID tenantId;
  private final Scope scope;
  private final List<UUID> preload;

  ProgramReplay(AnalysisService.Deps deps, UUID tenantId, Scope scope, List<UUID> preload) {
    this.deps = deps;
    this.tenantId = tenantId;
    this.scope = scope;
    this.preload = preload;
  }

  /** The program's tool result (CONTRACT shape). */
  JsonObject run(String program) {
    Budgets budgets = deps.settings().defaultBudgets();
    Instant deadline = deps.clock().instant().plusMillis(budgets.wallTimeMs());
    // Its llm() calls end with its cell (R6-8), set when the cell starts; never past the budget.
    java.util.concurrent.atomic.AtomicReference<Instant> cellDeadline =
        new java.util.concurrent.atomic.AtomicReference<>(deadline);
    // A replayed program's llm() calls spend the tenant's daily model tokens like the analysis' did
    // (the callbacks count them); the budgets bound how many it makes and the tokens they take.
    java.util.concurrent.atomic.AtomicLong tokens = new java.util.concurrent.atomic.AtomicLong();
    BudgetedCallbacks callbacks = new BudgetedCallbacks(CallbackSource.of(deps.callbacks().forTenant(tenantId, scope, cellDeadline::get)),
        budgets, new Citations(), usage -> tokens.addAndGet(usage.total()), tokens::get);
    SandboxSession session;
    try {
      session = deps.sandboxes().open(tenantId, scope, callbacks, null).await();
    } catch (SandboxCapacityExhausted | SandboxQuotaExceeded e) {
      throw e;
    } catch (Exception e) {
      // Checked ones too (a documents directory that cannot be written is an IOException, which
      // await() rethrows as it is): escaping, they ended the replay's thread and left it unanswered.
      throw new AnalysisService.AnalysisRefused(AnalysisService.AnalysisRefused.Reason.SANDBOX_UNAVAILABLE,
          "no sandbox could be started to replay the program: " + e.getMessage());
    }
    try {
      CellOptions defaults = deps.cellDefaults();
      Instant cellEnd = deps.clock().instant().plusMillis(defaults.wallTimeMs());
      cellDeadline.set(cellEnd.isBefore(deadline) ? cellEnd : deadline);
      CellOutcome outcome = session.execute(program, new CellOptions(defaults.wallTimeMs(), defaults.maxOutputChars(),
          preload.stream().map(UUID::toString).toList()), CellListener.NONE).await();
      return outcome.toToolResult();
    } finally {
      session.close().await();
    }
  }
}
