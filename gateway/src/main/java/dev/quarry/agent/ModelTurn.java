package dev.quarry.agent;

import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionAssistantMessageParam;
import com.openai.models.chat.completions.ChatCompletionMessage;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionMessageParam;
import com.openai.models.chat.completions.ChatCompletionMessageToolCall;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * One turn of the model as an analysis keeps it: what it said, the execute_code calls it asked for
 * and the tokens it cost. The live reply and the recorded {@code model_turn} event give the same
 * turn, and the turn is given back to the model the same way from either ({@link #toParam}): an
 * analysis rebuilt from its record asks the model exactly what an uninterrupted one would.
 *
 * @param content the message's text; null when it had none
 * @param calls   its function tool calls, in order (a custom tool call cannot be asked for: only the
 *                function execute_code is offered)
 */
record ModelTurn(String content, List<Call> calls, Usage usage) {

  /** One function tool call: the model's id for it, the function's name and its arguments' JSON text. */
  record Call(String id, String name, String arguments) {}

  ModelTurn {
    calls = List.copyOf(calls);
  }

  /** The turn of a live reply; null when the reply has no choices. */
  static ModelTurn of(ChatCompletion reply) {
    if (reply.choices().isEmpty()) {
      return null;
    }
    ChatCompletionMessage message = reply.choices().get(0).message();
    List<Call> calls = new ArrayList<>();
    for (ChatCompletionMessageToolCall call : message.toolCalls().orElse(List.of())) {
      call.function().ifPresent(f -> calls.add(new Call(f.id(), f.function().name(), f.function().arguments())));
    }
    return new ModelTurn(message.content().orElse(null), calls, ModelClient.usage(reply));
  }

  /** The turn a {@code model_turn} event recorded. */
  static ModelTurn ofEvent(JsonObject event) {
    List<Call> calls = new ArrayList<>();
    JsonArray recorded = event.getJsonArray("tool_calls", new JsonArray());
    for (int i = 0; i < recorded.size(); i++) {
      JsonObject c = recorded.getJsonObject(i);
      calls.add(new Call(c.getString("id"), c.getString("name"), c.getString("arguments")));
    }
    JsonObject usage = event.getJsonObject("usage", new JsonObject());
    return new ModelTurn(event.getString("content"), calls,
        new Usage(usage.getLong("prompt_tokens", 0L), usage.getLong("completion_tokens", 0L)));
  }

  /** The {@code tool_calls} of its {@code model_turn} event. */
  JsonArray callsJson() {
    JsonArray out = new JsonArray();
    calls.forEach(c -> out.add(new JsonObject().put("id", c.id()).put("name", c.name()).put("arguments", c.arguments())));
    return out;
  }

  /** The turn as the assistant's message in the next request. */
  ChatCompletionMessageParam toParam() {
    ChatCompletionAssistantMessageParam.Builder b = ChatCompletionAssistantMessageParam.builder();
    if (content != null) {
      b.content(content);
    }
    for (Call c : calls) {
      b.addToolCall(ChatCompletionMessageFunctionToolCall.builder().id(c.id())
          .function(ChatCompletionMessageFunctionToolCall.Function.builder().name(c.name()).arguments(c.arguments()).build())
          .build());
    }
    return ChatCompletionMessageParam.ofAssistant(b.build());
  }
}
