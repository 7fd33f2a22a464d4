/**
 * A worker process's exit code for a start it cannot get past however often it is retried:
 * its handlers module is missing or invalid (sysexits' EX_CONFIG). Its supervisor does not
 * replace it but stops with the same code, and so does `npm start` (a restart loop would look
 * healthy to a process manager and run nothing).
 */
export const EXIT_CONFIG = 78;
