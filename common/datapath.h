/* datapath.h: where built-in data (platforms/, scenarios/, profiles) is found.
 * A binary running from its build tree reads the source tree, so edits show at
 * once; an installed binary reads $(datadir)/ttasim. TTASIM_DATA_DIR overrides both. */
#ifndef TT_DATAPATH_H
#define TT_DATAPATH_H

#include <stddef.h>

/* The directory holding the built-in data (no trailing slash). */
const char *datapath_root(void);

/* Writes root/rel into out; returns 0 if that file exists, -1 if not. */
int datapath_find(const char *rel, char *out, size_t out_bytes);

#endif
