package dev.quarry.ingest;

/**
 * One source to ingest.
 *
 * @param fileName the name shown in errors; its extension is a hint, the bytes decide the type
 * @param uri where the source came from; a re-ingest with the same uri and other bytes replaces it
 * @param title an explicit title, or null to take it from the document
 * @param contentType a declared media type, or null
 * @param bytes the source
 */
public record IngestRequest(String fileName, String uri, String title, String contentType, byte[] bytes) {}
