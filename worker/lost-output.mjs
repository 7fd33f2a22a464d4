/**
 * For a long-running process (npm start, the worker supervisor, a worker process, the
 * console): a log line that cannot be written must not end it. When whoever reads its output
 * goes away (`npm run worker 2>&1 | a-log-shipper`, and the shipper ends) each later write
 * fails with EPIPE; when the output is a file on a disk that fills (or at its size limit),
 * with ENOSPC (EFBIG); when it is a terminal that hung up, with EIO. Node raises each as an
 * 'error' on the stream, which, unhandled, ends the process at its next line — a worker's
 * jobs then left running until their leases run out (the stop itself logs a line), the
 * console ended at the next error it logs. The lines are lost instead (a file takes them
 * again once there is room); the work, and a clean stop, go on. Plain JavaScript: the
 * console's preload (http-guard.mjs) runs before TypeScript can be loaded.
 */
export function outliveLostOutput() {
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {});
}
