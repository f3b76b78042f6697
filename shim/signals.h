/* SIGINT and SIGTERM with the default disposition (signals.c). */
#ifndef GT_SIGNALS_H
#define GT_SIGNALS_H

void gt_signals_install(void);

#endif
