/* Test-only rtld-audit library (LD_AUDIT, see rtld-audit(7)): appends the path of every object
 * the dynamic loader maps into the process, at start-up or by dlopen, to the file named by
 * INTERPROBE_OPEN_LOG, one per line. Unlike /proc/self/maps read at exit it also sees what was
 * opened and closed again (hwloc unloads its plugins, and their libX11/libOpenCL, at the end). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

unsigned int la_version(unsigned int version) { return version < LAV_CURRENT ? version : LAV_CURRENT; }

unsigned int la_objopen(struct link_map* map, Lmid_t lmid, uintptr_t* cookie) {
  (void)lmid;
  (void)cookie;
  const char* log = getenv("INTERPROBE_OPEN_LOG");
  if (!log || !*log || !map->l_name || !*map->l_name) return 0;
  int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return 0;
  size_t length = strlen(map->l_name);
  if (write(fd, map->l_name, length) == (ssize_t)length) (void)!write(fd, "\n", 1);
  close(fd);
  return 0;
}
