/** npm start and npm run web refuse a port something already listens on, before the console is built. */
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { assertPortFree } from './web';

test('a port something listens on is refused with why; a free one passes', async () => {
  const holder = net.createServer();
  await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
  const { port } = holder.address() as net.AddressInfo;
  await assert.rejects(assertPortFree(port, '127.0.0.1'), new RegExp(`^Error: port ${port} on 127.0.0.1 is in use: stop what holds it, or set PORT$`));
  await new Promise<void>((resolve) => holder.close(() => resolve()));
  await assertPortFree(port, '127.0.0.1');
});
