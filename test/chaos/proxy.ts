/**
 * A loopback TCP proxy that can cut a "host" off the network without closing anything:
 * while cut, it stops reading from both sides of every connection (new ones too), the way
 * a partition looks to TCP — no FIN, no RST, writes just stop arriving. When healed,
 * whatever was sent meanwhile is delivered late (as a real network would retransmit it).
 * Modelled on pg-boss's halfOpenProxy.
 */
import net from 'node:net';

export interface Proxy {
  port: number;
  cut(): void;
  heal(): void;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<Proxy> {
  let cutOff = false;
  const sockets = new Set<net.Socket>();
  /** Chunks read just as the cut began: delivered on heal. */
  let held: [net.Socket, Buffer][] = [];

  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
    if (cutOff) s.pause();
  };
  // No .pipe(): its drain handling would resume a socket the cut paused.
  const forward = (src: net.Socket, dst: net.Socket) => {
    src.on('data', (chunk: Buffer) => {
      if (cutOff) {
        held.push([dst, chunk]);
        src.pause();
        return;
      }
      if (!dst.write(chunk)) {
        src.pause();
        dst.once('drain', () => {
          if (!cutOff) src.resume();
        });
      }
    });
  };
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, targetHost);
    track(client);
    track(upstream);
    forward(client, upstream);
    forward(upstream, client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    cut() {
      cutOff = true;
      for (const s of sockets) s.pause();
    },
    heal() {
      cutOff = false;
      const late = held;
      held = [];
      for (const [dst, chunk] of late) if (!dst.destroyed) dst.write(chunk);
      for (const s of sockets) s.resume();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
