package dev.quarry.api;

import dev.quarry.agent.AnalysisStore;
import io.vertx.core.Future;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.UUID;

/**
 * GET /v1/analyses and GET /v1/analyses/{id} written a page at a time as the client takes them
 * ({@link ResponseStreams#pages}), each page its own short query, bounded in rows and in bytes: an
 * analysis holds a cell's whole output in each step and its program's in {@code program_output}, so a
 * listing of 500 or a record of 100 steps could be tens of megabytes. The bytes are those of the
 * objects encoded whole before: each value is encoded by Vert.x as it was, and the structure around
 * them by Jackson's generator ({@link JsonParts}).
 */
final class AnalysisPages {
  /** Analyses read at a time for a listing. */
  static final int LIST_PAGE = 50;
  /** Steps read at a time for a record. */
  static final int STEP_PAGE = 16;
  /** The most bytes of text one page reads (a page holds at least one analysis or step). */
  static final long PAGE_BYTES = 256 * 1024;

  private AnalysisPages() {}

  /** {@code {"analyses": [...]}}: the tenant's latest {@code limit} analyses, newest first, without steps. */
  static final class Listing {
    private final AnalysisStore store;
    private final UUID tenant;
    private final JsonParts out = new JsonParts();
    private int remaining;
    private AnalysisStore.Position after;

    Listing(AnalysisStore store, UUID tenant, int limit) {
      this.store = store;
      this.tenant = tenant;
      this.remaining = limit;
      out.write(json -> {
        json.writeStartObject();
        json.writeFieldName("analyses");
        json.writeStartArray();
      });
    }

    Future<ResponseStreams.Piece> next() {
      return store.page(tenant, after, Math.min(LIST_PAGE, remaining), PAGE_BYTES).map(page -> {
        out.write(json -> {
          for (JsonObject analysis : page.items()) {
            json.writeRawValue(analysis.encode());
          }
        });
        remaining -= page.items().size();
        after = page.next();
        boolean last = after == null || remaining <= 0;
        if (last) {
          out.write(json -> {
            json.writeEndArray();
            json.writeEndObject();
          });
        }
        return new ResponseStreams.Piece(out.take(), last);
      });
    }
  }

  /** One analysis with its steps: the record's fields, then {@code "steps": [...]}, as its last field. */
  static final class Record {
    private final AnalysisStore store;
    private final UUID tenant;
    private final UUID id;
    private final JsonParts out = new JsonParts();
    private Integer after = 0;

    Record(AnalysisStore store, UUID tenant, UUID id, JsonObject analysis) {
      this.store = store;
      this.tenant = tenant;
      this.id = id;
      out.write(json -> {
        json.writeStartObject();
        for (Map.Entry<String, Object> field : analysis) {
          json.writeFieldName(field.getKey());
          json.writeRawValue(Json.encode(field.getValue()));
        }
        json.writeFieldName("steps");
        json.writeStartArray();
      });
    }

    Future<ResponseStreams.Piece> next() {
      return store.steps(tenant, id, after, STEP_PAGE, PAGE_BYTES).map(page -> {
        out.write(json -> {
          for (JsonObject step : page.items()) {
            json.writeRawValue(step.encode());
          }
        });
        after = page.next();
        boolean last = after == null;
        if (last) {
          out.write(json -> {
            json.writeEndArray();
            json.writeEndObject();
          });
        }
        return new ResponseStreams.Piece(out.take(), last);
      });
    }
  }
}
