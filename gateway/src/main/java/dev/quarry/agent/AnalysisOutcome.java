package dev.quarry.agent;

import java.util.Locale;

/**
 * How an analysis ended: one of four kinds, each with what its record and its terminal event say.
 * The loop returns one; nothing ends it by throwing.
 */
public sealed interface AnalysisOutcome {
  /** An analysis' status once it has ended, as the API writes it ({@link #wire()}). */
  enum Status {
    SUCCEEDED, FAILED, BUDGET_EXHAUSTED, CANCELLED;

    public String wire() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  Status status();

  /** The error's type for the record; null when it succeeded. */
  String errorType();

  /** The error's message for the record; null when it succeeded. */
  String message();

  /** The model gave its final {@code {"answer", "program"}}. */
  record Succeeded(FinalAnswer answer) implements AnalysisOutcome {
    public Status status() {
      return Status.SUCCEEDED;
    }

    public String errorType() {
      return null;
    }

    public String message() {
      return null;
    }
  }

  /** It could not go on: the model, the sandbox, the storage or the caller's deletion of its tenant. */
  record Failed(String errorType, String message) implements AnalysisOutcome {
    public Status status() {
      return Status.FAILED;
    }
  }

  /** One of its budgets (model turns, tokens, wall time, execute_code calls) ran out. */
  record BudgetExhausted(String budget, String detail) implements AnalysisOutcome {
    public Status status() {
      return Status.BUDGET_EXHAUSTED;
    }

    public String errorType() {
      return "BudgetExceeded";
    }

    public String message() {
      return budget + ": " + detail;
    }
  }

  /** Its caller cancelled it (or the gateway drained past its grace). */
  record Cancelled() implements AnalysisOutcome {
    public Status status() {
      return Status.CANCELLED;
    }

    public String errorType() {
      return "Cancelled";
    }

    public String message() {
      return "the analysis was cancelled";
    }
  }
}
