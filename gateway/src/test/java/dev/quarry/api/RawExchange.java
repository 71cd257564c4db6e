package dev.quarry.api;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Bytes written to a socket as they are, and every response that comes back parsed (status, head,
 * body by its framing), however many there are: for requests no client library would send, and
 * for pipelines of them. Reading stops when the server closes, or when it has been quiet for a
 * while after a whole response (a kept-alive connection), or at an overall limit.
 */
final class RawExchange {
  private RawExchange() {}

  /** One response: its status line, headers (names in lower case) and body (chunk framing removed). */
  record Response(int status, String statusLine, Map<String, List<String>> headers, byte[] body) {
    String header(String name) {
      List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
      return values == null || values.isEmpty() ? null : values.get(0);
    }

    String text() {
      return new String(body, StandardCharsets.UTF_8);
    }

    boolean closes() {
      String c = header("connection");
      return c != null && c.toLowerCase(Locale.ROOT).contains("close");
    }

    @Override
    public String toString() {
      String t = text();
      return statusLine + " " + (t.length() > 300 ? t.substring(0, 300) + "…" : t);
    }
  }

  /**
   * What came back: the parsed responses, whether the server closed the connection, every byte
   * received (for greps), and what could not be parsed as a response, if anything.
   */
  record Result(List<Response> responses, boolean closed, String raw, String unparsed) {
    Response first() {
      return responses.isEmpty() ? null : responses.get(0);
    }

    @Override
    public String toString() {
      return responses + (closed ? " (closed)" : " (open)") + (unparsed.isEmpty() ? "" : " unparsed: "
          + (unparsed.length() > 200 ? unparsed.substring(0, 200) + "…" : unparsed));
    }
  }

  /**
   * Writes {@code bytes}, then (when {@code closeOutput}) shuts the socket's output, and reads.
   *
   * @param methods the methods of the requests sent, in order: a response to a HEAD has no body
   * @param quiet   how long a kept-alive connection may stay silent after a whole response
   * @param overall the most time the whole exchange may take
   */
  static Result exchange(int port, byte[] bytes, boolean closeOutput, List<String> methods, Duration quiet,
      Duration overall) {
    try (Socket socket = new Socket("localhost", port)) {
      socket.setSoTimeout((int) quiet.toMillis());
      OutputStream out = socket.getOutputStream();
      try {
        out.write(bytes);
        out.flush();
        if (closeOutput) {
          socket.shutdownOutput();
        }
      } catch (IOException e) {
        // The server may close while a long request is still being written: read what it said.
      }
      return read(socket.getInputStream(), new ArrayDeque<>(methods), overall);
    } catch (IOException e) {
      return new Result(List.of(), true, "", "connection failed: " + e);
    }
  }

  private static Result read(InputStream in, Deque<String> methods, Duration overall) throws IOException {
    long deadline = System.nanoTime() + overall.toNanos();
    ByteArrayOutputStream all = new ByteArrayOutputStream();
    boolean closed = false;
    while (System.nanoTime() < deadline) {
      byte[] buffer = new byte[8192];
      int n;
      try {
        n = in.read(buffer);
      } catch (SocketTimeoutException quiet) {
        if (parse(all.toByteArray(), new ArrayDeque<>(methods)).complete > 0) {
          break; // a kept-alive connection after its responses
        }
        continue;
      } catch (IOException reset) {
        closed = true;
        break;
      }
      if (n < 0) {
        closed = true;
        break;
      }
      all.write(buffer, 0, n);
    }
    Parsed parsed = parse(all.toByteArray(), methods);
    return new Result(parsed.responses, closed, all.toString(StandardCharsets.ISO_8859_1), parsed.rest);
  }

  private record Parsed(List<Response> responses, int complete, String rest) {}

  /** The whole responses at the start of {@code data}, and what follows them. */
  private static Parsed parse(byte[] data, Deque<String> methods) {
    List<Response> responses = new ArrayList<>();
    int at = 0;
    while (at < data.length) {
      int headEnd = indexOf(data, "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1), at);
      if (headEnd < 0) {
        break;
      }
      String head = new String(data, at, headEnd - at, StandardCharsets.ISO_8859_1);
      String[] lines = head.split("\r\n");
      int status;
      try {
        status = lines[0].startsWith("HTTP/") ? Integer.parseInt(lines[0].substring(9, 12)) : -1;
      } catch (RuntimeException e) {
        status = -1;
      }
      if (status < 0) {
        break;
      }
      Map<String, List<String>> headers = new LinkedHashMap<>();
      for (int i = 1; i < lines.length; i++) {
        int colon = lines[i].indexOf(':');
        if (colon > 0) {
          headers.computeIfAbsent(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), k -> new ArrayList<>())
              .add(lines[i].substring(colon + 1).trim());
        }
      }
      int bodyStart = headEnd + 4;
      String method = methods.isEmpty() ? "GET" : methods.peek();
      Response partial = new Response(status, lines[0], headers, new byte[0]);
      String te = partial.header("transfer-encoding");
      String cl = partial.header("content-length");
      byte[] body;
      int next;
      if (method.equals("HEAD") || status / 100 == 1 || status == 204 || status == 304) {
        body = new byte[0];
        next = bodyStart;
      } else if (te != null && te.toLowerCase(Locale.ROOT).contains("chunked")) {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int p = bodyStart;
        boolean done = false;
        while (true) {
          int lineEnd = indexOf(data, "\r\n".getBytes(StandardCharsets.ISO_8859_1), p);
          if (lineEnd < 0) {
            break;
          }
          String sizeLine = new String(data, p, lineEnd - p, StandardCharsets.ISO_8859_1);
          int semi = sizeLine.indexOf(';');
          int size;
          try {
            size = Integer.parseInt((semi < 0 ? sizeLine : sizeLine.substring(0, semi)).trim(), 16);
          } catch (NumberFormatException e) {
            break;
          }
          p = lineEnd + 2;
          if (size == 0) {
            int trailerEnd = indexOf(data, "\r\n".getBytes(StandardCharsets.ISO_8859_1), p);
            if (trailerEnd < 0) {
              break;
            }
            p = trailerEnd + 2;
            done = true;
            break;
          }
          if (p + size + 2 > data.length) {
            break;
          }
          b.write(data, p, size);
          p += size + 2;
        }
        if (!done) {
          break;
        }
        body = b.toByteArray();
        next = p;
      } else if (cl != null && cl.trim().matches("[0-9]{1,9}")) {
        int length = Integer.parseInt(cl.trim());
        if (bodyStart + length > data.length) {
          break;
        }
        body = java.util.Arrays.copyOfRange(data, bodyStart, bodyStart + length);
        next = bodyStart + length;
      } else {
        body = java.util.Arrays.copyOfRange(data, bodyStart, data.length); // until the connection closes
        next = data.length;
      }
      responses.add(new Response(status, lines[0], headers, body));
      if (!methods.isEmpty()) {
        methods.poll();
      }
      at = next;
    }
    return new Parsed(responses, responses.size(), new String(data, at, data.length - at, StandardCharsets.ISO_8859_1));
  }

  private static int indexOf(byte[] data, byte[] needle, int from) {
    outer:
    for (int i = from; i <= data.length - needle.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (data[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }
}
