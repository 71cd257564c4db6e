package dev.quarry.ingest;

/**
 * Turns the bytes of one source into docling-style items. Implementations are stateless and
 * thread-safe; they run on worker threads (they block and use CPU).
 */
public interface Converter {
  /**
   * @param fileName the name shown in errors (and the default title)
   * @param bytes the whole source; never empty (the caller rejects empty input)
   * @param budget what the conversion may build and allocate: every structure whose size the source
   *     decides (a table's grid, a parser's tree, its items) is charged to it before it grows
   * @throws IngestException for input that is corrupt, encrypted, malformed or dangerous
   * @throws IngestBudget.Exceeded past a limit of {@code budget}
   */
  ConvertedDocument convert(String fileName, byte[] bytes, IngestBudget budget) throws IngestException;

  /** {@link #convert(String, byte[], IngestBudget)} under the default limits, refusals as thrown. */
  default ConvertedDocument convert(String fileName, byte[] bytes) throws IngestException {
    try {
      return convert(fileName, bytes, IngestBudget.of(fileName, bytes.length));
    } catch (IngestBudget.Exceeded e) {
      throw e.refusal();
    }
  }
}
