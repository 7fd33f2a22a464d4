/**
 * For a long-running process (npm start, the worker supervisor, a worker process, the
 * console): when whoever reads its output goes away (`npm run worker 2>&1 | a-log-shipper`,
 * and the shipper ends), each later write fails with EPIPE, which Node raises as an 'error'
 * on the stream and, unhandled, ends the process at its next line — a worker's jobs then
 * left running until their leases run out (the stop itself logs a line), the console
 * ended at the next error it logs. The lines are lost instead; the work, and a clean stop,
 * go on. Any other stream error is still raised. Plain JavaScript: the console's preload
 * (http-guard.mjs) runs before TypeScript can be loaded.
 */
export function outliveLostOutput() {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err) => {
      if (err.code === 'EPIPE' || err.code === 'ERR_STREAM_DESTROYED') return;
      throw err;
    });
  }
}
