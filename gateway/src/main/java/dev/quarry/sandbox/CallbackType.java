package dev.quarry.sandbox;

import dev.quarry.proto.sandbox.v1.CallbackKind;

/** What sandbox code may call back into the gateway for, named as the contract and the events name it. */
public enum CallbackType {
  SEARCH("search"),
  LIST_DOCUMENTS("list_documents"),
  LLM("llm");

  private final String wireName;

  CallbackType(String wireName) {
    this.wireName = wireName;
  }

  public String wireName() {
    return wireName;
  }

  /** The protocol's kind in Quarry's words; null for a kind this gateway does not know. */
  static CallbackType of(CallbackKind kind) {
    return switch (kind) {
      case CALLBACK_KIND_SEARCH -> SEARCH;
      case CALLBACK_KIND_LIST_DOCUMENTS -> LIST_DOCUMENTS;
      case CALLBACK_KIND_LLM -> LLM;
      default -> null;
    };
  }
}
