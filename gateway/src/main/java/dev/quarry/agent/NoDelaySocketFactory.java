package dev.quarry.agent;

import java.io.IOException;
import java.net.InetAddress;
import java.net.Socket;
import javax.net.SocketFactory;

/**
 * Plain sockets with Nagle's algorithm off, for the model client. OkHttp leaves it on and writes a
 * request body in 8 KiB segments: once the conversation is over one segment (the system prompt
 * alone is 6 KiB), the last segment waits for the server's delayed ACK of the previous one, up to
 * 40 ms per model request on Linux, before the model even sees the whole request.
 */
final class NoDelaySocketFactory extends SocketFactory {
  private final SocketFactory plain = SocketFactory.getDefault();

  @Override
  public Socket createSocket() throws IOException {
    return noDelay(plain.createSocket());
  }

  @Override
  public Socket createSocket(String host, int port) throws IOException {
    return noDelay(plain.createSocket(host, port));
  }

  @Override
  public Socket createSocket(String host, int port, InetAddress localHost, int localPort) throws IOException {
    return noDelay(plain.createSocket(host, port, localHost, localPort));
  }

  @Override
  public Socket createSocket(InetAddress host, int port) throws IOException {
    return noDelay(plain.createSocket(host, port));
  }

  @Override
  public Socket createSocket(InetAddress address, int port, InetAddress localAddress, int localPort)
      throws IOException {
    return noDelay(plain.createSocket(address, port, localAddress, localPort));
  }

  private static Socket noDelay(Socket socket) throws IOException {
    try {
      socket.setTcpNoDelay(true);
      return socket;
    } catch (IOException | RuntimeException e) {
      socket.close();
      throw e;
    }
  }
}
