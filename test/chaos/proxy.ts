/**
 * A loopback TCP proxy that can cut a "host" off the network without closing anything:
 * while cut, it stops reading from both sides of every connection (new ones too), the way
 * a partition looks to TCP — no FIN, no RST, writes just stop arriving. When healed,
 * whatever was sent meanwhile is delivered late (as a real network would retransmit it).
 * Modelled on pg-boss's halfOpenProxy.
 *
 * silenceOn() is the other failure a long-lived connection meets: a NAT or firewall that
 * forgets an established flow. The connection whose client next sends the given bytes
 * (a prepared statement's name, say) goes quiet for good from that message on: nothing
 * more is delivered either way, nothing is closed. Other and new connections pass. With
 * `deliver`, that message itself still reaches the server, which runs it (a statement that
 * commits) while its answer is lost.
 *
 * slow() delays every answer (what the server sends back) by a fixed time, in order: a server
 * whose commits wait on a slow disk, or a distant one.
 */
import net from 'node:net';

export interface Proxy {
  port: number;
  /** Connections accepted so far. */
  readonly accepted: number;
  cut(): void;
  heal(): void;
  /** Resolves once a connection has been silenced (its client sent `bytes`; delivered first with `deliver`). */
  silenceOn(bytes: string, o?: { deliver?: boolean }): Promise<void>;
  /** From now on every answer from the target arrives `ms` late (0: on time again). */
  slow(ms: number): void;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number, targetHost = '127.0.0.1'): Promise<Proxy> {
  let cutOff = false;
  const sockets = new Set<net.Socket>();
  /** Chunks read just as the cut began: delivered on heal. */
  let held: [net.Socket, Buffer][] = [];
  /** Connections gone quiet for good: what they send is dropped. */
  const silenced = new WeakSet<net.Socket>();
  let trigger: { bytes: Buffer; deliver: boolean; fired: () => void } | null = null;
  let answerDelayMs = 0;
  /** Per connection, answers waiting out the delay, in order (each with when it is due). */
  const late = new Map<net.Socket, { due: number; chunk: Buffer }[]>();
  const deliverLate = (dst: net.Socket, queue: { due: number; chunk: Buffer }[]) =>
    setTimeout(() => {
      while (queue.length && queue[0]!.due <= Date.now()) {
        const { chunk } = queue.shift()!;
        if (!dst.destroyed) dst.write(chunk);
      }
      if (queue.length) deliverLate(dst, queue);
      else late.delete(dst);
    }, Math.max(0, queue[0]!.due - Date.now()));

  const track = (s: net.Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
    if (cutOff) s.pause();
  };
  // No .pipe(): its drain handling would resume a socket the cut paused.
  const forward = (src: net.Socket, dst: net.Socket, fromClient: boolean) => {
    src.on('data', (chunk: Buffer) => {
      if (fromClient && trigger && chunk.includes(trigger.bytes)) {
        silenced.add(src).add(dst);
        if (trigger.deliver) dst.write(chunk);
        trigger.fired();
        trigger = null;
      }
      if (silenced.has(src)) {
        src.pause();
        dst.pause();
        return;
      }
      if (cutOff) {
        held.push([dst, chunk]);
        src.pause();
        return;
      }
      if (!fromClient && (answerDelayMs > 0 || late.has(dst))) {
        // Behind any answer still waiting, even once the delay is back to 0: bytes in order.
        const queue = late.get(dst) ?? [];
        queue.push({ due: Date.now() + answerDelayMs, chunk });
        if (queue.length === 1) {
          late.set(dst, queue);
          deliverLate(dst, queue);
        }
        return;
      }
      if (!dst.write(chunk)) {
        src.pause();
        dst.once('drain', () => {
          if (!cutOff && !silenced.has(src)) src.resume();
        });
      }
    });
  };
  let accepted = 0;
  const server = net.createServer((client) => {
    accepted++;
    const upstream = net.connect(targetPort, targetHost);
    track(client);
    track(upstream);
    forward(client, upstream, true);
    forward(upstream, client, false);
    // A silenced flow is forgotten: one side closing it is never heard of on the other.
    client.on('close', () => silenced.has(client) || upstream.destroy());
    upstream.on('close', () => silenced.has(upstream) || client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    get accepted() {
      return accepted;
    },
    cut() {
      cutOff = true;
      for (const s of sockets) s.pause();
    },
    heal() {
      cutOff = false;
      const late = held;
      held = [];
      for (const [dst, chunk] of late) if (!dst.destroyed) dst.write(chunk);
      for (const s of sockets) if (!silenced.has(s)) s.resume();
    },
    slow(ms) {
      answerDelayMs = ms;
    },
    silenceOn: (bytes, o = {}) => new Promise<void>((fired) => (trigger = { bytes: Buffer.from(bytes), deliver: !!o.deliver, fired })),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
