package dev.quarry.ingest;

/** PLACEHOLDER until the converter's branch is merged; deleted then. */
public final class PdfConverter implements Converter {
  @Override
  public ConvertedDocument convert(String fileName, byte[] bytes) throws IngestException {
    throw new IngestException(IngestException.Reason.UNSUPPORTED_TYPE, fileName, "placeholder");
  }
}
