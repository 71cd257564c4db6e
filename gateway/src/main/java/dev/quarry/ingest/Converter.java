package dev.quarry.ingest;

/**
 * Turns the bytes of one source into docling-style items. Implementations are stateless and
 * thread-safe; they run on worker threads (they block and use CPU).
 */
public interface Converter {
  /**
   * @param fileName the name shown in errors (and the default title)
   * @param bytes the whole source; never empty (the caller rejects empty input)
   * @throws IngestException for input that is corrupt, encrypted, malformed or dangerous
   */
  ConvertedDocument convert(String fileName, byte[] bytes) throws IngestException;
}
