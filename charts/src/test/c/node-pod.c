/*
 * The test pods' one program (KubeletNodeTest), linked statically so that an image of this file
 * alone runs: no registry, no base image.
 *
 *   node-pod pause [TAG...]        sleep until SIGTERM/SIGINT, reaping children (the pod sandbox;
 *                                  TAG only marks the process so a test can find it)
 *   node-pod serve PORT            accept TCP connections on PORT, answer "node-pod\n" and close
 *   node-pod connect IP PORT MS    exit 0 if IP:PORT answers "node-pod" within MS milliseconds,
 *                                  1 if it does not (refused, dropped, timed out)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static const char ANSWER[] = "node-pod\n";

static void on_stop(int sig) {
    (void) sig;
    _exit(0);
}

static void on_child(int sig) {
    (void) sig;
    while (waitpid(-1, NULL, WNOHANG) > 0) {
    }
}

static _Noreturn void pause_forever(void) {
    signal(SIGTERM, on_stop);
    signal(SIGINT, on_stop);
    signal(SIGCHLD, on_child);
    for (;;) {
        pause();
    }
}

static int serve(int port) { /* returns only on a set-up error */
    signal(SIGTERM, on_stop);
    signal(SIGPIPE, SIG_IGN);
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_ANY)};
    if (s < 0 || bind(s, (struct sockaddr *) &a, sizeof a) < 0 || listen(s, 16) < 0) {
        perror("node-pod serve");
        return 2;
    }
    printf("node-pod: serving on %d\n", port);
    fflush(stdout);
    for (;;) {
        int c = accept(s, NULL, NULL);
        if (c < 0) {
            continue;
        }
        ssize_t ignored = write(c, ANSWER, sizeof ANSWER - 1);
        (void) ignored;
        close(c);
    }
}

static int connect_once(const char *ip, int port, int ms) {
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, ip, &a.sin_addr) != 1) {
        fprintf(stderr, "node-pod connect: not an IPv4 address: %s\n", ip);
        return 2;
    }
    int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (connect(s, (struct sockaddr *) &a, sizeof a) < 0 && errno != EINPROGRESS) {
        perror("node-pod connect");
        return 1;
    }
    struct pollfd p = {.fd = s, .events = POLLOUT};
    int err = 0;
    socklen_t len = sizeof err;
    if (poll(&p, 1, ms) != 1 || getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0) {
        fprintf(stderr, "node-pod connect: %s:%d: %s\n", ip, port, err ? strerror(err) : "timed out");
        return 1;
    }
    char buf[sizeof ANSWER] = {0};
    size_t got = 0;
    p.events = POLLIN;
    while (got < sizeof ANSWER - 1 && poll(&p, 1, ms) == 1) {
        ssize_t n = read(s, buf + got, sizeof ANSWER - 1 - got);
        if (n <= 0) {
            break;
        }
        got += (size_t) n;
    }
    close(s);
    if (strcmp(buf, ANSWER) != 0) {
        fprintf(stderr, "node-pod connect: %s:%d answered %zu bytes, not node-pod\n", ip, port, got);
        return 1;
    }
    printf("node-pod: %s:%d answered\n", ip, port);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 2 && strcmp(argv[1], "pause") == 0) {
        pause_forever();
    }
    if (argc == 3 && strcmp(argv[1], "serve") == 0) {
        return serve(atoi(argv[2]));
    }
    if (argc == 5 && strcmp(argv[1], "connect") == 0) {
        return connect_once(argv[2], atoi(argv[3]), atoi(argv[4]));
    }
    fprintf(stderr, "usage: node-pod pause [TAG...] | serve PORT | connect IP PORT MS\n");
    return 2;
}
