/* fdio.h: whole buffers through pipes between a parent and the processes it
 * forks (simulation children, parallel workers), retried on EINTR. */
#ifndef TT_FDIO_H
#define TT_FDIO_H

#include <stddef.h>

/* Writes all of buf to fd; -1 on error. */
int fdio_write_all(int fd, const void *buf, size_t bytes);

/* Reads up to bytes from fd; returns how many were read (fewer at EOF or on error). */
size_t fdio_read_all(int fd, void *buf, size_t bytes);

#endif
