/* Waiting for the GPU to finish what the program queued, for the CUPTI
 * reference recorder's exit: records of unfinished work would come without
 * timestamps. */
#ifndef GPU_IDLE_H
#define GPU_IDLE_H

/* Synchronises the calling thread's current context and every active
 * primary context, giving up after `seconds` (a hung GPU must not hang the
 * program's exit). Returns 0 when done, -1 when it gave up or the driver
 * could not be asked. */
int ref_wait_gpu_idle(unsigned seconds);

#endif
