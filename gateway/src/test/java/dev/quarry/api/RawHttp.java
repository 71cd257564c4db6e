package dev.quarry.api;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * HTTP/1.1 written straight to a socket: the request line goes out byte for byte as given, so no
 * client library normalises, re-encodes or refuses the path on the way (as curl's --path-as-is).
 */
final class RawHttp {
  private RawHttp() {}

  /** A status and the bytes after the head, as the gateway sent them (chunk framing included). */
  record Answer(int status, String head, String body) {
    @Override
    public String toString() {
      return status + " " + (body.length() > 300 ? body.substring(0, 300) + "…" : body);
    }
  }

  /**
   * Sends one request with {@code Connection: close} and reads the answer to the end.
   *
   * @param bearer the credential, or null for none
   * @param body   a JSON body, or null for none
   */
  static Answer send(int port, String method, String rawTarget, String bearer, String body) {
    StringBuilder request = new StringBuilder()
        .append(method).append(' ').append(rawTarget).append(" HTTP/1.1\r\n")
        .append("Host: localhost\r\nConnection: close\r\n");
    if (bearer != null) {
      request.append("Authorization: Bearer ").append(bearer).append("\r\n");
    }
    byte[] content = body == null ? new byte[0] : body.getBytes(StandardCharsets.UTF_8);
    if (body != null) {
      request.append("Content-Type: application/json\r\n");
    }
    request.append("Content-Length: ").append(content.length).append("\r\n\r\n");
    return send(port, request.toString().getBytes(StandardCharsets.ISO_8859_1), content);
  }

  static Answer send(int port, byte[] head, byte[] content) {
    try (Socket socket = new Socket("localhost", port)) {
      socket.setSoTimeout(30_000);
      OutputStream out = socket.getOutputStream();
      out.write(head);
      out.write(content);
      out.flush();
      InputStream in = socket.getInputStream();
      String all = new String(in.readAllBytes(), StandardCharsets.ISO_8859_1);
      int end = all.indexOf("\r\n\r\n");
      String responseHead = end < 0 ? all : all.substring(0, end);
      String responseBody = end < 0 ? "" : all.substring(end + 4);
      int status = responseHead.startsWith("HTTP/1.") && responseHead.length() >= 12
          ? Integer.parseInt(responseHead.substring(9, 12)) : 0;
      return new Answer(status, responseHead, responseBody);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
