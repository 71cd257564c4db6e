package dev.quarry.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * HTTP/1.1 over a plain socket, for the noisy tenant: a client library would read what it is sent
 * and finish what it starts, and the attacks must do neither. Each request has a connection of its
 * own ({@code Connection: close}).
 */
final class RawHttp {
  private RawHttp() {}

  /** A connection to the gateway; {@code receiveBuffer} > 0 shrinks the kernel's receive buffer (set before connecting). */
  static Socket connect(int port, int receiveBuffer) throws IOException {
    Socket socket = new Socket();
    if (receiveBuffer > 0) {
      socket.setReceiveBufferSize(receiveBuffer);
    }
    socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
    return socket;
  }

  /** The request's head; the body, of {@code contentLength} bytes (-1: none), is the caller's to send. */
  static void head(Socket socket, String method, String path, String key, String contentType, long contentLength)
      throws IOException {
    StringBuilder head = new StringBuilder()
        .append(method).append(' ').append(path).append(" HTTP/1.1\r\n")
        .append("Host: 127.0.0.1\r\n")
        .append("Authorization: Bearer ").append(key).append("\r\n")
        .append("Connection: close\r\n");
    if (contentType != null) {
      head.append("Content-Type: ").append(contentType).append("\r\n");
    }
    if (contentLength >= 0) {
      head.append("Content-Length: ").append(contentLength).append("\r\n");
    }
    head.append("\r\n");
    OutputStream out = socket.getOutputStream();
    out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
    out.flush();
  }

  /** A whole request with a small body. */
  static void send(Socket socket, String method, String path, String key, String contentType, byte[] body)
      throws IOException {
    head(socket, method, path, key, contentType, body.length);
    socket.getOutputStream().write(body);
    socket.getOutputStream().flush();
  }

  /** The response's status code from its first line, reading no further than that line. */
  static int status(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    int b;
    while ((b = in.read()) >= 0 && b != '\n') {
      line.append((char) b);
    }
    String[] parts = line.toString().split(" ");
    if (parts.length < 2) {
      throw new IOException("no status line: '" + line + "'");
    }
    return Integer.parseInt(parts[1].strip());
  }

  /** Reads the rest of the response to its end, keeping at most {@code keep} characters of it. */
  static String drain(InputStream in, int keep) throws IOException {
    StringBuilder kept = new StringBuilder();
    byte[] buffer = new byte[16_384];
    int n;
    while ((n = in.read(buffer)) >= 0) {
      if (kept.length() < keep) {
        kept.append(new String(buffer, 0, Math.min(n, keep - kept.length()), StandardCharsets.UTF_8));
      }
    }
    return kept.toString();
  }

  static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException e) {
      // already gone: what closing it was for
    }
  }
}
