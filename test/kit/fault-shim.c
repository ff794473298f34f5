/*
 * Fault injection for the fault suite (test/faults/*.test.ts), loaded with
 * LD_PRELOAD into `otpd serve`. While a trigger file exists in $FAULT_SHIM_DIR,
 * the calls it names fail on every descriptor whose path contains the
 * trigger's first line; sockets, pipes and every other file are untouched.
 *   $FAULT_SHIM_DIR/sync   fsync, fdatasync
 *   $FAULT_SHIM_DIR/write  write (regular files only), pwrite, pwrite64
 * The second line, if any, names the errno: ENOSPC; anything else is EIO.
 * The trigger is read on each call (a test turns it on and off while the
 * process runs); each failure appends one line to $FAULT_SHIM_DIR/hits.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

static int trigger_errno(const char *which, int fd) {
  const char *dir = getenv("FAULT_SHIM_DIR");
  if (dir == NULL) return 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, which);
  /* Raw syscalls: nothing here goes back through the wrappers. */
  int t = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (t < 0) return 0;
  char buf[512];
  ssize_t n = syscall(SYS_read, t, buf, sizeof buf - 1);
  syscall(SYS_close, t);
  if (n <= 0) return 0;
  buf[n] = 0;
  char *nl = strchr(buf, '\n');
  const char *err = "";
  if (nl) {
    *nl = 0;
    err = nl + 1;
  }
  if (buf[0] == 0) return 0;
  char link[64], target[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t m = syscall(SYS_readlinkat, AT_FDCWD, link, target, sizeof target - 1);
  if (m <= 0) return 0;
  target[m] = 0;
  if (strstr(target, buf) == NULL) return 0;
  int e = strncmp(err, "ENOSPC", 6) == 0 ? ENOSPC : EIO;
  char hits[4096];
  snprintf(hits, sizeof hits, "%s/hits", dir);
  int h = (int)syscall(SYS_openat, AT_FDCWD, hits, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (h >= 0) {
    char line[4200];
    int len = snprintf(line, sizeof line, "%s %s\n", which, target);
    syscall(SYS_write, h, line, len);
    syscall(SYS_close, h);
  }
  return e;
}

static int regular(int fd) {
  struct stat st;
  return syscall(SYS_fstat, fd, &st) == 0 && S_ISREG(st.st_mode);
}

typedef int (*sync_fn)(int);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*pwrite64_fn)(int, const void *, size_t, off64_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
#define REAL(name, type) static type real_##name; if (!real_##name) real_##name = (type)dlsym(RTLD_NEXT, #name)

int fsync(int fd) {
  REAL(fsync, sync_fn);
  int e = trigger_errno("sync", fd);
  if (e) { errno = e; return -1; }
  return real_fsync(fd);
}

int fdatasync(int fd) {
  REAL(fdatasync, sync_fn);
  int e = trigger_errno("sync", fd);
  if (e) { errno = e; return -1; }
  return real_fdatasync(fd);
}

ssize_t pwrite(int fd, const void *b, size_t n, off_t o) {
  REAL(pwrite, pwrite_fn);
  int e = trigger_errno("write", fd);
  if (e) { errno = e; return -1; }
  return real_pwrite(fd, b, n, o);
}

ssize_t pwrite64(int fd, const void *b, size_t n, off64_t o) {
  REAL(pwrite64, pwrite64_fn);
  int e = trigger_errno("write", fd);
  if (e) { errno = e; return -1; }
  return real_pwrite64(fd, b, n, o);
}

ssize_t write(int fd, const void *b, size_t n) {
  REAL(write, write_fn);
  if (regular(fd)) {
    int e = trigger_errno("write", fd);
    if (e) { errno = e; return -1; }
  }
  return real_write(fd, b, n);
}
