/** Ports on this host: one free now, and whether one could be listened on. */
import net from 'node:net';

/** A port nothing listens on now at 127.0.0.1 (the kernel's pick). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** Whether this process could listen on `port` at `host`: null, or why not (EADDRINUSE: something listens there). */
export function probePort(port: number, host: string): Promise<NodeJS.ErrnoException | null> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', (err: NodeJS.ErrnoException) => resolve(err));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(null)));
  });
}
