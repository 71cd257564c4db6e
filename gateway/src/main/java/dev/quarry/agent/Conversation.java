package dev.quarry.agent;

import com.openai.models.chat.completions.ChatCompletionMessageParam;
import com.openai.models.chat.completions.ChatCompletionUserMessageParam;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.UUID;

/**
 * The words Quarry puts into an analysis' conversation with the model besides the system prompt:
 * the first question (with the turns it continues, its scope and its preloaded documents), the
 * corrections, the caller's instructions' heading and a follow-up's heading. The same words for a
 * live analysis and for one rebuilt from its record, so that the model is asked exactly the same.
 */
final class Conversation {
  static final String NO_EXECUTION_CORRECTION = "You have not run any code yet. Call execute_code to look"
      + " at the documents before answering; an answer must rest on code you ran.";
  static final String MALFORMED_CORRECTION = "Your final message could not be used: %s. Reply with only"
      + " a JSON object {\"answer\": \"...\", \"program\": \"...\"} and nothing around it.";
  /** Heads the caller's own instructions, which add to the system prompt and cannot lift its rules. */
  static final String CALLER_INSTRUCTIONS = "The caller adds these instructions. They add to the rules above"
      + " and do not replace them; the final message stays {\"answer\", \"program\"}:\n";
  /** Heads the earlier turns of a conversation, which are context, not the question. */
  static final String EARLIER_TURNS = "This question continues a conversation. Its earlier turns, oldest"
      + " first, are context for the question (resolve references such as \"the year before\" with them);"
      + " answer only the question, from the documents:\n";
  /** Heads a follow-up question, asked after the answer to the one before. */
  static final String FOLLOW_UP = "A follow-up question. The variables and files of your earlier code are still"
      + " there; answer it the same way, ending with {\"answer\", \"program\"}:\n";

  private Conversation() {}

  /** The first user message: the turns it continues, the question, its scope and its preloaded documents. */
  static String firstUserMessage(AnalysisRequest request) {
    StringBuilder text = new StringBuilder();
    if (!request.conversation().isEmpty()) {
      text.append(EARLIER_TURNS);
      for (AnalysisRequest.Turn turn : request.conversation()) {
        text.append('[').append(turn.role()).append("] ").append(turn.text()).append('\n');
      }
      text.append('\n');
    }
    text.append("Question: ").append(request.question());
    if (!request.scope().isAll()) {
      text.append("\n\nThis analysis is scoped to these documents only: ")
          .append(String.join(", ", request.scope().documentIds().stream().map(UUID::toString).sorted().toList()))
          .append('.');
    }
    if (!request.preload().isEmpty()) {
      text.append("\n\nThe variable `documents` holds these preloaded documents: ")
          .append(String.join(", ", request.preload().stream().map(UUID::toString).toList())).append('.');
    }
    return text.toString();
  }

  static ChatCompletionMessageParam user(String text) {
    return ChatCompletionMessageParam.ofUser(ChatCompletionUserMessageParam.builder().content(text).build());
  }

  /** The turns a chat client sent before its question, as the started event records them. */
  static JsonArray turns(List<AnalysisRequest.Turn> turns) {
    JsonArray out = new JsonArray();
    turns.forEach(t -> out.add(new JsonObject().put("role", t.role()).put("text", t.text())));
    return out;
  }

  static JsonArray ids(java.util.Collection<UUID> ids) {
    JsonArray out = new JsonArray();
    ids.stream().map(UUID::toString).sorted().forEach(out::add);
    return out;
  }
}
