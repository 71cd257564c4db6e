package dev.quarry.ingest;

/** The kinds of source Quarry converts. */
public enum SourceType {
  PDF("pdf"),
  DOCX("docx"),
  HTML("html"),
  MARKDOWN("markdown"),
  TEXT("text"),
  DOCLING("docling");

  private final String wireName;

  SourceType(String wireName) {
    this.wireName = wireName;
  }

  /** The name used in the API and the database. */
  public String wireName() {
    return wireName;
  }
}
