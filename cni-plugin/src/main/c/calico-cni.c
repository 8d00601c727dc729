/*
 * Thin client of the Calico CNI daemon: the executable the container runtime calls.
 * Sends the whole environment (KEY=VALUE\0 ... \0) and stdin over the daemon's unix socket,
 * then relays the daemon's answer ("<exit status>\n" + stdout) as its own stdout and exit status.
 * Socket: $CALICO_CNI_SOCKET, default /var/run/calico/cni.sock.
 * Build: cc -O2 -o calico calico-cni.c
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

extern char **environ;

static void fail(const char *what, const char *path) {
    /* A CNI error object with code 11 (try again later): the daemon may just be restarting. */
    printf("{\"cniVersion\":\"1.0.0\",\"code\":11,\"msg\":\"calico CNI daemon: %s %s: %s\"}\n", what, path,
           strerror(errno));
    exit(1);
}

static void write_all(int fd, const char *buf, size_t len, const char *path) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("write to", path);
        }
        buf += n;
        len -= (size_t) n;
    }
}

int main(void) {
    const char *path = getenv("CALICO_CNI_SOCKET");
    if (path == NULL || *path == '\0') path = "/var/run/calico/cni.sock";
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof addr.sun_path) { errno = ENAMETOOLONG; fail("socket path", path); }
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) fail("socket for", path);
    if (connect(fd, (struct sockaddr *) &addr, sizeof addr) != 0) fail("connect to", path);

    for (char **e = environ; *e != NULL; e++) write_all(fd, *e, strlen(*e) + 1, path);
    write_all(fd, "", 1, path);
    char buf[65536];
    ssize_t n;
    while ((n = read(0, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("read stdin for", path);
        }
        write_all(fd, buf, (size_t) n, path);
    }
    shutdown(fd, SHUT_WR);

    int status = -1, in_status = 1;
    while ((n = read(fd, buf, sizeof buf)) != 0) {
        if (n < 0) {
            if (errno == EINTR) continue;
            fail("read from", path);
        }
        ssize_t i = 0;
        for (; in_status && i < n; i++) {
            if (buf[i] == '\n') { in_status = 0; }
            else if (buf[i] >= '0' && buf[i] <= '9') { status = (status < 0 ? 0 : status * 10) + (buf[i] - '0'); }
        }
        if (i < n) fwrite(buf + i, 1, (size_t) (n - i), stdout);
    }
    if (status < 0) { errno = EPROTO; fail("no answer from", path); }
    fflush(stdout);
    return status;
}
