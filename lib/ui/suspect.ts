/**
 * What "suspect" means, said the same way wherever the console marks one (the jobs list, a
 * job's page, a died worker's jobs in hand, the queues' wake-up column). The rule itself is
 * lib/queue/job.ts SUSPECT_STREAK; this is only its words.
 */
export const SUSPECT_MEANING =
  'its last attempts, two or more in a row, each ended with its lease lost, the worker gone (a crash, a kill, a stall): a likely poison job';

/** Why a suspect does no more harm: the claim's rule (lib/queue/ops/claim.ts). */
export const SUSPECT_ALONE = 'A worker runs at most one suspect at a time, so it takes no other job down with it';

/**
 * Whether the console marks a job as a suspect: `streak` leases lost in a row (the rule's
 * SUSPECT_STREAK, passed in: components do not import lib/queue), and not finished well. A
 * completed or cancelled job harms no worker any more; a failed one keeps the mark, which
 * says why it is in the dead letter. The workers read's SQL (listWorkers,
 * lib/queue/read.ts) applies the same rule to a died worker's jobs in hand.
 */
export const marksSuspect = (status: string, leaseLostStreak: number, streak: number) =>
  leaseLostStreak >= streak && status !== 'completed' && status !== 'cancelled';
