package dev.quarry.agent;

import com.openai.core.JsonValue;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.Map;

/** The one tool the model gets: {@code execute_code(code: string)}. */
final class ExecuteCodeTool {
  static final String NAME = "execute_code";

  static final ChatCompletionFunctionTool DEFINITION = ChatCompletionFunctionTool.builder()
      .function(FunctionDefinition.builder()
          .name(NAME)
          .description("Runs Python code in this analysis' sandbox and returns {success, stdout, stderr,"
              + " error, truncated, duration_ms}. Variables persist between calls.")
          .parameters(FunctionParameters.builder()
              .putAdditionalProperty("type", JsonValue.from("object"))
              .putAdditionalProperty("properties", JsonValue.from(Map.of("code", Map.of(
                  "type", "string",
                  "description", "the Python code to run; top-level await is allowed"))))
              .putAdditionalProperty("required", JsonValue.from(List.of("code")))
              .putAdditionalProperty("additionalProperties", JsonValue.from(false))
              .build())
          .build())
      .build();

  private ExecuteCodeTool() {}

  /** The code argument of a call, or an explanation for the model of why there is none. */
  static String code(String name, String argumentsJson) {
    if (!NAME.equals(name)) {
      throw new IllegalArgumentException("there is no tool named '" + name + "'; the only tool is execute_code(code)");
    }
    JsonObject args;
    try {
      args = new JsonObject(argumentsJson == null || argumentsJson.isBlank() ? "{}" : argumentsJson);
    } catch (DecodeException | ClassCastException e) {
      throw new IllegalArgumentException("the arguments of execute_code are not a JSON object: " + e.getMessage());
    }
    Object code = args.getValue("code");
    if (!(code instanceof String s) || s.isBlank()) {
      throw new IllegalArgumentException("execute_code needs a non-empty string argument 'code'");
    }
    return s;
  }
}
