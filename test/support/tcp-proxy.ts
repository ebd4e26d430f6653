import net, { type AddressInfo } from 'node:net';

/** A TCP pass-through that a test closes and reopens on the same port to cut a dependency off and bring it back. */
export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async open(): Promise<void> {
    const server = net.createServer((downstream) => {
      const upstream = net.connect(this.target.port, this.target.host);
      const pair = [downstream, upstream];
      for (const socket of pair) {
        this.sockets.add(socket);
        socket.on('error', () => {});
        socket.on('close', () => {
          this.sockets.delete(socket);
          for (const end of pair) end.destroy();
        });
      }
      downstream.pipe(upstream).pipe(downstream);
    });
    await new Promise<void>((resolve) => server.listen(this.port, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Drops every open connection and stops listening. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = undefined;
  }
}
