#include "common/fdio.h"

#include <errno.h>
#include <unistd.h>

int fdio_write_all(int fd, const void *buf, size_t bytes)
{
    for (size_t off = 0; off < bytes;) {
        ssize_t w = write(fd, (const char *)buf + off, bytes - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

size_t fdio_read_all(int fd, void *buf, size_t bytes)
{
    size_t off = 0;
    while (off < bytes) {
        ssize_t r = read(fd, (char *)buf + off, bytes - off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        off += (size_t)r;
    }
    return off;
}
